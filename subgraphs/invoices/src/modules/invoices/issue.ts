import type { OperationContext, ToolContext } from '@cuadra/shared';
import { buildLines, documentTotals, type LineInput } from '../items/document-lines.ts';
import type { InvoiceLine } from '../../lib/fiscal-document.ts';
import { draftDocument, insertDraft, postDocument } from './ops.ts';
import type { WithholdingRate } from '../../lib/money.ts';
import { invoices, type CustomerSnapshot, type InvoiceDoc } from './model.ts';

/** An invoice another part of finance issues on its own schedule (a recurring period, a rental period, a plan's proration). */
export interface IssuedInvoice {
  /** Derived from what causes it (`inv_r<schedule>_<date>`, `inv_rnt<rental>_<period>`…), so it exists at most once. */
  id: string;
  customer_id: string;
  customer: CustomerSnapshot;
  currency: string;
  issue_date: string;
  due_date: string;
  /** The lines; `account` credits a line that is not a sale to its own account (lib/fiscal-document.ts). */
  lines: readonly (LineInput & { account?: string })[];
  withholdings: readonly WithholdingRate[];
  notes: string | null;
  source: NonNullable<InvoiceDoc['source']>;
  /** Post it once made (else it stays a draft for review). */
  post: boolean;
}

/** An invoice priced beforehand (its lines stored with the intent that asks for it), issued by a call or by a sweep. */
export type PricedInvoice = Omit<IssuedInvoice, 'lines' | 'post'> & { lines: InvoiceLine[] };

/** Writes the draft under its derived id, unless a retried or concurrent issue already did. */
async function insertOnce(ctx: OperationContext, spec: PricedInvoice): Promise<void> {
  try {
    await insertDraft(ctx, draftDocument({
      _id: spec.id, workspace: ctx.workspace, kind: 'invoice', customer_id: spec.customer_id, customer: spec.customer, currency: spec.currency,
      issue_date: spec.issue_date, due_date: spec.due_date, lines: spec.lines, withholding_rates: [...spec.withholdings], notes: spec.notes, created_at: ctx.now,
      source: spec.source, ...documentTotals(spec.lines, spec.withholdings),
    }));
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err; // a concurrent issue made it
  }
}

/** Posts the draft through `post`; a post another call already made (or holds) is not an error. */
async function postOnce(post: () => Promise<unknown>): Promise<void> {
  try {
    await post();
  } catch (err) {
    if ((err as { code?: string }).code !== 'conflict') throw err; // already posted (or being posted) by another call
  }
}

/**
 * Issues an invoice exactly once: the draft is written under its derived id (a retried or
 * concurrent issue finds it there), priced by the invoices' own line model, then posted through
 * the invoices' post path when asked. The same path as invoices.create and invoices.post, so the
 * invoice is an ordinary one: numbered, in the receivables lane, collected and reminded like any other.
 * @returns the invoice's id
 */
export async function issueInvoiceOnce(ctx: ToolContext, spec: IssuedInvoice): Promise<string> {
  const exists = await invoices(ctx.db).findById(spec.id, { _id: 1 }).lean();
  if (!exists) {
    await insertOnce(ctx, { ...spec, lines: await priceInvoiceLines(ctx, spec.currency, spec.lines) });
  }
  if (spec.post) await postOnce(() => postDocument(ctx, spec.id));
  return spec.id;
}

/**
 * {@link issueInvoiceOnce} of an invoice priced beforehand (by {@link priceInvoiceLines} in the call
 * that asked for it), always posted — by `post`: the invoices' post path, `postDocument` in a call
 * (it signs), the open-item post in a sweep that finishes a dead call's intent.
 * @returns whether the invoice is posted now (false: another call's post holds it; the invoices' sweep finishes that post)
 */
export async function issuePricedInvoiceOnce(ctx: OperationContext, spec: PricedInvoice, post: (id: string) => Promise<unknown>): Promise<boolean> {
  if (!(await invoices(ctx.db).exists({ _id: spec.id, workspace: ctx.workspace }))) await insertOnce(ctx, spec);
  const stored = await invoices(ctx.db).findOne({ _id: spec.id, workspace: ctx.workspace }, { status: 1 }).lean();
  if (stored?.status !== 'draft') return true;
  await postOnce(() => post(spec.id));
  return (await invoices(ctx.db).findOne({ _id: spec.id, workspace: ctx.workspace }, { status: 1 }).lean())?.status !== 'draft';
}

/** Prices lines by the invoices' line model (items, VAT checked against the workspace's regime), each line keeping the account it names. */
export async function priceInvoiceLines(ctx: ToolContext, currency: string, lines: IssuedInvoice['lines'], fieldBase?: string): Promise<InvoiceLine[]> {
  return (await buildLines(ctx, currency, lines, fieldBase)).map((l, i) => (lines[i].account ? { ...l, account: lines[i].account } : l));
}
