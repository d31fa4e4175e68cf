import {
  beginOperation, createPositioned, CuadraError, insertOrStored, repeatableId, defineListTool, defineOperation, defineTool, dropOperation, ID_INPUT, ID_SCHEMA, newId, recordOutput, REPAIR_AFTER_MS, runOperation,
  searchTerm, takeOverOperation, workspaceToday, type OperationContext, type OperationKind, type ToolContext,
} from '@cuadra/shared';
import { buildLines, buyerFromCrm, documentAllowanceCharges, documentTotals, lineSchema, withholdingsSchema, type LineInput } from '../items/document-lines.ts';
import { DOCUMENT_ALLOWANCE_CHARGES_SCHEMA, type DocumentAllowanceChargeInput } from '../../lib/line-model.ts';
import { regimeContext, withholdingRatesFor } from '../../lib/tax-regime.ts';
import { draftDocument, insertDraft } from '../invoices/ops.ts';
import { invoices } from '../invoices/model.ts';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentMatches, salesDocuments, salesDocumentView, salesSeries, type SalesDocument } from '../../lib/sales-document.ts';
import { addDays, type WithholdingRate } from '../../lib/money.ts';
import { assertNotAfterToday, documentToday } from '../../lib/document-dates.ts';

/** Input of quotes.create and sales_orders.create. */
export interface SalesInput {
  customer_id: string;
  currency: string;
  issue_date?: string;
  valid_until?: string;
  lines: LineInput[];
  withholdings?: WithholdingRate[];
  allowance_charges?: DocumentAllowanceChargeInput[];
  notes?: string;
}

/** JSON Schema properties of a quote or sales order. */
export const salesFields = {
  customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  issue_date: { type: 'string', format: 'date' },
  notes: { type: 'string', maxLength: 2000 },
  lines: { type: 'array', minItems: 1, maxItems: 500, items: lineSchema },
  withholdings: withholdingsSchema,
  allowance_charges: DOCUMENT_ALLOWANCE_CHARGES_SCHEMA,
} as const;

/** Creates a quote (draft) or a sales order (open). */
export async function createSalesDocument(ctx: ToolContext, kind: SalesDocument['kind'], input: SalesInput, source: SalesDocument['source'] = null, dealKey?: string): Promise<SalesDocument> {
  const rc = await regimeContext(ctx.db, ctx.workspace, ctx.principal);
  const lines = await buildLines(ctx, input.currency, input.lines, '/lines', rc);
  const issueDate = input.issue_date ?? documentToday(ctx);
  assertNotAfterToday(ctx, issueDate);
  const validUntil = kind === 'quote' ? (input.valid_until ?? addDays(issueDate, 30)) : null;
  if (validUntil && validUntil < issueDate) throw new CuadraError('invalid_input', 'A quote cannot expire before it is issued.', { field: '/valid_until' });
  const customer = await buyerFromCrm(ctx, input.customer_id);
  const rates = withholdingRatesFor(rc, input.withholdings);
  const acs = documentAllowanceCharges(rc, lines, input.allowance_charges);
  const prefix = kind === 'quote' ? 'quo' : 'so';
  const doc: SalesDocument = {
    // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's insert applied late and the rerun's collide.
    _id: repeatableId(prefix) ?? newId(prefix), workspace: ctx.workspace, kind, status: kind === 'quote' ? 'draft' : 'open',
    customer_id: input.customer_id, customer, search_lc: `${customer.name} ${input.notes ?? ''}`.toLowerCase(), currency: input.currency,
    issue_date: issueDate, valid_until: validUntil, lines, withholding_rates: rates, ...documentTotals(lines, rates, acs), notes: input.notes ?? null,
    source, converted_to: null, ...(dealKey ? { deal_key: dealKey } : {}), created_at: ctx.now, updated_at: ctx.now,
  };
  // Stored already by an earlier attempt of this call (its insert applied late): that document is answered.
  return insertOrStored(() => createPositioned(salesDocuments(ctx.db), doc, salesSeries(kind)), salesDocuments(ctx.db), doc, ctx.workspace);
}

/** Moves a quote or order from one of `from` to `to` by one conditional update; `conflict` otherwise. */
export async function transition(ctx: ToolContext, kind: SalesDocument['kind'], id: string, from: SalesDocument['status'][], to: SalesDocument['status'], extra: Partial<SalesDocument> = {}): Promise<SalesDocument> {
  const after = await salesDocuments(ctx.db).findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, kind, status: { $in: from } },
    { $set: { status: to, updated_at: ctx.now, ...extra } },
    { returnDocument: 'after' },
  ).lean();
  if (after) return after;
  const doc = await salesDocuments(ctx.db).findOne({ _id: id, workspace: ctx.workspace, kind }).lean();
  if (!doc) throw new CuadraError('not_found', `No ${kind === 'quote' ? 'quote' : 'sales order'} ${id} exists in this workspace.`);
  throw new CuadraError('conflict', `${kind === 'quote' ? 'Quote' : 'Sales order'} ${id} is ${doc.status}; it cannot become ${to} from there (needs ${from.join(' or ')}).`);
}


/** Whether a conversion's target is written. */
async function targetWritten(ctx: OperationContext, target: NonNullable<SalesDocument['converted_to']>): Promise<boolean> {
  return Boolean(target.kind === 'invoice' ? await invoices(ctx.db).exists({ _id: target.id }) : await salesDocuments(ctx.db).exists({ _id: target.id }));
}

/**
 * A quote's or order's conversion as a durable operation (shared/src/operations.ts): begun before
 * the source is marked — one conditional update from the statuses it converts from, naming the
 * target's id and the day it is dated (`converted_on`) —; its one step writes the target under
 * that id when it is not there yet (a draft invoice, or an open sales order). A process that dies
 * in between leaves the marker, and the quotes module's maintenance sweep writes the target after
 * the lease, with no call. Conversions an older version left half done (the source marked, no
 * `converted_on`, no marker) are adopted: each gets its marker and its day (the day its source was
 * marked, in the default country's calendar: the older version kept no country), then the step.
 */
export const conversionOperation: OperationKind<SalesDocument> = defineOperation<SalesDocument>({
  kind: 'sales_conversion',
  legacyMarkers: [{
    collection: 'sales_documents', filter: { converted_to: { $ne: null }, converted_on: { $exists: false } },
    record: (m) => m._id, leasedAt: (m) => m.updated_at as Date,
    release: async (db, m) => {
      await salesDocuments(db).updateOne({ _id: m._id, converted_on: { $exists: false } }, { $set: { converted_on: workspaceToday({}, m.updated_at as Date) } });
    },
  }],
  load: (ctx, id) => salesDocuments(ctx.db).findOne({ _id: id, workspace: ctx.workspace, converted_to: { $ne: null } }).lean(),
  steps: [
    async function writeTarget(ctx, source) {
      const target = source.converted_to!;
      if (await targetWritten(ctx, target)) return source;
      const day = source.converted_on ?? workspaceToday({}, source.updated_at);
      const common = { customer_id: source.customer_id, customer: source.customer, currency: source.currency, lines: source.lines, withholding_rates: source.withholding_rates, notes: source.notes };
      if (target.kind === 'invoice') {
        await insertDraft(ctx, draftDocument({
          _id: target.id, workspace: ctx.workspace, kind: 'invoice', ...common, issue_date: day, due_date: addDays(day, 30), created_at: ctx.now,
          // The deal a quote was made from stays named on what it becomes (crm links the deal to it).
          source: source.kind === 'quote' ? { quote_id: source._id, ...(source.source?.deal_id ? { deal_id: source.source.deal_id } : {}) } : { sales_order_id: source._id, ...(source.source ?? {}) }, ...documentTotals(source.lines, source.withholding_rates, source.allowance_charges ?? []),
        })).catch((e) => {
          if ((e as { code?: number }).code !== 11000) throw e;
        });
      } else {
        const doc: SalesDocument = {
          ...source, _id: target.id, kind: 'sales_order', status: 'open', valid_until: null, source: { quote_id: source._id, ...(source.source?.deal_id ? { deal_id: source.source.deal_id } : {}) }, converted_to: null, converted_on: undefined, deal_key: undefined,
          issue_date: day, created_at: ctx.now, updated_at: ctx.now,
        };
        await createPositioned(salesDocuments(ctx.db), doc, salesSeries('sales_order')).catch((e) => {
          if ((e as { code?: number }).code !== 11000) throw e;
        });
      }
      return source;
    },
  ],
});

/**
 * Takes over a conversion whose call died before writing its target, once its lease passed: the
 * runner's marker (one taker), or, for one an older version left (no `converted_on`), the source's
 * `updated_at` for the lease and one conditional update stamping its day (one taker), its marker then begun.
 */
async function takeOverConversion(ctx: ToolContext, doc: SalesDocument): Promise<boolean> {
  if (doc.converted_on) return takeOverOperation(ctx, conversionOperation, doc._id);
  if (doc.updated_at.getTime() >= ctx.now.getTime() - REPAIR_AFTER_MS) return false;
  const taken = await salesDocuments(ctx.db).updateOne({ _id: doc._id, converted_on: { $exists: false } }, { $set: { converted_on: documentToday(ctx) } });
  if (taken.modifiedCount !== 1) return false;
  await beginOperation(ctx, conversionOperation, doc._id);
  return true;
}

/**
 * Converts a quote or order into a draft invoice (or a quote into a sales order), exactly once, as
 * the durable operation {@link conversionOperation}. A call that finds the source marked by a call
 * that died before writing the target finishes it after the lease; one still being written (within
 * the lease) is answered `conflict`, as a finished one is.
 */
export async function convert(ctx: ToolContext, kind: SalesDocument['kind'], id: string, from: SalesDocument['status'][], to: 'invoice' | 'sales_order'): Promise<{ source: SalesDocument; target_id: string }> {
  const doc = await salesDocuments(ctx.db).findOne({ _id: id, workspace: ctx.workspace, kind }).lean();
  if (doc && !from.includes(doc.status)) {
    if (doc.converted_to && !(await targetWritten(ctx, doc.converted_to)) && (await takeOverConversion(ctx, doc))) {
      const source = (await salesDocuments(ctx.db).findById(id).lean())!;
      return { source: await runOperation(ctx, conversionOperation, source, id), target_id: source.converted_to!.id };
    }
  } else if (doc) {
    await beginOperation(ctx, conversionOperation, id);
  }
  const target = { kind: to, id: newId(to === 'invoice' ? 'inv' : 'so') };
  let source: SalesDocument;
  try {
    source = await transition(ctx, kind, id, from, kind === 'quote' ? 'converted' : 'invoiced', { converted_to: target, converted_on: documentToday(ctx) });
  } catch (err) {
    // Lost: the marker is the winner's when the source is converted; otherwise nobody's.
    if (doc && from.includes(doc.status) && !(await salesDocuments(ctx.db).exists({ _id: id, converted_to: { $ne: null } }))) await dropOperation(ctx, conversionOperation, id);
    throw err;
  }
  return { source: await runOperation(ctx, conversionOperation, source, id), target_id: target.id };
}

const KIND_WORDS = { quote: { module: 'quotes', one: 'quote', many: 'quotes' }, sales_order: { module: 'sales_orders', one: 'sales order', many: 'sales orders' } } as const;

/** `<module>.get` of quotes or sales orders: one document of that kind in the caller's workspace. */
export function salesDocumentGetTool(kind: SalesDocument['kind']) {
  const words = KIND_WORDS[kind];
  return defineTool({
    name: `${words.module}.get`,
    description: `Get one ${words.one} by id: customer, lines, totals, status and what it was converted into.`,
    risk: 'read',
    input: ID_INPUT,
    output: recordOutput(kind, SALES_DOCUMENT_VIEW_SCHEMA),
    async handler(input, ctx) {
      const doc = await salesDocuments(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, kind }).lean();
      if (!doc) throw new CuadraError('not_found', `No ${words.one} ${input.id} exists in this workspace.`);
      return { [kind]: salesDocumentView(doc) };
    },
  });
}

/** `<module>.list` of quotes or sales orders, newest first, filtered by status (of that kind), customer or search. */
export function salesDocumentListTool<const S extends readonly SalesDocument['status'][]>(kind: SalesDocument['kind'], statuses: S) {
  const words = KIND_WORDS[kind];
  return defineListTool({
    name: `${words.module}.list`,
    description: `List ${words.many}, newest first; filter by status, customer or a case-insensitive search over the customer name and notes.`,
    model: salesDocuments,
    series: salesSeries(kind),
    view: salesDocumentView,
    viewSchema: SALES_DOCUMENT_VIEW_SCHEMA,
    filters: { status: { enum: statuses }, customer_id: ID_SCHEMA, search: { type: 'string', minLength: 1, maxLength: 100 } },
    match: ({ status, customer_id, search }) => {
      const text = searchTerm(search);
      if (!status && !customer_id && !text) return undefined;
      return (d: SalesDocument) => (!status || d.status === status) && (!customer_id || d.customer_id === customer_id) && (!text || salesDocumentMatches(d, text));
    },
  });
}
