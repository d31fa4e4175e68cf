import type { ToolContext } from '@cuadra/shared';
import { buildLines, documentTotals, type LineInput } from '../../lib/documents.ts';
import { draftDocument, insertDraft, postDocument } from '../../lib/invoice-ops.ts';
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
  lines: readonly LineInput[];
  withholdings: readonly WithholdingRate[];
  notes: string | null;
  source: NonNullable<InvoiceDoc['source']>;
  /** Post it once made (else it stays a draft for review). */
  post: boolean;
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
    const lines = await buildLines(ctx, spec.currency, spec.lines);
    try {
      await insertDraft(ctx, draftDocument({
        _id: spec.id, workspace: ctx.workspace, kind: 'invoice', customer_id: spec.customer_id, customer: spec.customer, currency: spec.currency,
        issue_date: spec.issue_date, due_date: spec.due_date, lines, withholding_rates: [...spec.withholdings], notes: spec.notes, created_at: ctx.now,
        source: spec.source, ...documentTotals(lines, spec.withholdings),
      }));
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err; // a concurrent issue made it
    }
  }
  if (spec.post) {
    try {
      await postDocument(ctx, spec.id);
    } catch (err) {
      if ((err as { code?: string }).code !== 'conflict') throw err; // already posted (or being posted) by another call
    }
  }
  return spec.id;
}
