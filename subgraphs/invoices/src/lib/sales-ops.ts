import { createPositioned, CuadraError, defineListTool, defineTool, ID_INPUT, ID_SCHEMA, newId, recordOutput, searchTerm, type ToolContext, REPAIR_AFTER_MS } from '@cuadra/shared';
import { buildLines, buyerFromCrm, documentAllowanceCharges, documentTotals, lineSchema, withholdingsSchema, type LineInput } from './documents.ts';
import { DOCUMENT_ALLOWANCE_CHARGES_SCHEMA, type DocumentAllowanceChargeInput } from './line-model.ts';
import { regimeContext, withholdingRatesFor } from './tax-regime.ts';
import { draftDocument, insertDraft } from './invoice-ops.ts';
import { invoices } from '../modules/invoices/model.ts';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentMatches, salesDocuments, salesDocumentView, salesSeries, type SalesDocument } from './sales-document.ts';
import { addDays, type WithholdingRate } from './money.ts';
import { assertNotAfterToday, documentToday } from './document-dates.ts';

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
  const doc: SalesDocument = {
    _id: newId(kind === 'quote' ? 'quo' : 'so'), workspace: ctx.workspace, kind, status: kind === 'quote' ? 'draft' : 'open',
    customer_id: input.customer_id, customer, search_lc: `${customer.name} ${input.notes ?? ''}`.toLowerCase(), currency: input.currency,
    issue_date: issueDate, valid_until: validUntil, lines, withholding_rates: rates, ...documentTotals(lines, rates, acs), notes: input.notes ?? null,
    source, converted_to: null, ...(dealKey ? { deal_key: dealKey } : {}), created_at: ctx.now, updated_at: ctx.now,
  };
  await createPositioned(salesDocuments(ctx.db), doc, salesSeries(kind));
  return doc;
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


/**
 * Converts a quote or order into a draft invoice (or a quote into a sales order), exactly once:
 * the target's id is chosen and written on the source by one conditional update, then the target
 * is written with that id. A retry after a crash in between finds the id and writes the target.
 */
export async function convert(ctx: ToolContext, kind: SalesDocument['kind'], id: string, from: SalesDocument['status'][], to: 'invoice' | 'sales_order'): Promise<{ source: SalesDocument; target_id: string }> {
  const targetId = newId(to === 'invoice' ? 'inv' : 'so');
  let source: SalesDocument;
  try {
    source = await transition(ctx, kind, id, from, kind === 'quote' ? 'converted' : 'invoiced', { converted_to: { kind: to, id: targetId } });
  } catch (err) {
    const doc = await salesDocuments(ctx.db).findOne({ _id: id, workspace: ctx.workspace, kind }).lean();
    const target = doc?.converted_to;
    const exists = target && (target.kind === 'invoice' ? await invoices(ctx.db).exists({ _id: target.id }) : await salesDocuments(ctx.db).exists({ _id: target.id }));
    // Only a conversion left unfinished for a minute is taken for interrupted; a younger one is
    // another call still writing its target, and this call answers `conflict` as it would after.
    const stale = doc && doc.updated_at.getTime() < ctx.now.getTime() - REPAIR_AFTER_MS;
    if (!doc || !target || exists || !stale) throw err;
    source = doc; // interrupted conversion: finish it with the id already chosen
  }
  const chosen = source.converted_to!.id;
  const common = { customer_id: source.customer_id, customer: source.customer, currency: source.currency, lines: source.lines, withholding_rates: source.withholding_rates, notes: source.notes };
  if (to === 'invoice') {
    const issueDate = documentToday(ctx);
    await insertDraft(ctx, draftDocument({
      _id: chosen, workspace: ctx.workspace, kind: 'invoice', ...common, issue_date: issueDate, due_date: addDays(issueDate, 30), created_at: ctx.now,
      // The deal a quote was made from stays named on what it becomes (crm links the deal to it).
      source: kind === 'quote' ? { quote_id: source._id, ...(source.source?.deal_id ? { deal_id: source.source.deal_id } : {}) } : { sales_order_id: source._id, ...(source.source ?? {}) }, ...documentTotals(source.lines, source.withholding_rates, source.allowance_charges ?? []),
    })).catch((e) => {
      if ((e as { code?: number }).code !== 11000) throw e;
    });
  } else {
    const doc: SalesDocument = {
      ...source, _id: chosen, kind: 'sales_order', status: 'open', valid_until: null, source: { quote_id: source._id, ...(source.source?.deal_id ? { deal_id: source.source.deal_id } : {}) }, converted_to: null, deal_key: undefined,
      issue_date: documentToday(ctx), created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(salesDocuments(ctx.db), doc, salesSeries('sales_order')).catch((e) => {
      if ((e as { code?: number }).code !== 11000) throw e;
    });
  }
  return { source, target_id: chosen };
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
