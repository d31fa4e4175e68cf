import { defineSource, type RecordsQuery, type ReadContext } from '@cuadra/shared';
import { allTimeCounts } from '../../books/rollup-intents.ts';
import { INVOICE_STATUSES, invoiceMatches, invoices, type InvoiceDoc } from './model.ts';

/** The compact row of an invoice or credit note in records.list. */
function invoiceRow(i: InvoiceDoc) {
  return {
    id: i._id, kind: i.kind, number: i.number, status: i.status, customer_id: i.customer_id, customer_name: i.customer.name, currency: i.currency,
    issue_date: i.issue_date, due_date: i.due_date, total: i.total, amount_due: i.amount_due, balance: i.balance,
    authority_status: i.authority?.status ?? null,
  };
}

/**
 * How many invoices and credit notes match kind and status, from the all-currency count rollup
 * kept on write (no collection count: the store here scans for it). Not known with a search.
 */
async function invoicesTotal(q: RecordsQuery, ctx: ReadContext): Promise<number | null> {
  if (q.search) return null;
  const v = await allTimeCounts(ctx.db, ctx.workspace);
  // Debit notes are counted when posted, not by status (they are paid like invoices): with a status, unknown.
  const debitNotes = v.debit_notes ?? 0;
  if (q.kind === 'debit_note') return q.status ? null : debitNotes;
  if (!q.kind && q.status && debitNotes > 0) return null;
  const invoicesCount = q.kind === 'credit_note' ? 0 : (q.status ? (v[`status_${q.status}`] ?? 0) : INVOICE_STATUSES.reduce((s, st) => s + (v[`status_${st}`] ?? 0), 0));
  const notesCount = q.kind === 'invoice' || (q.status && q.status !== 'posted') ? 0 : (v.credit_notes ?? 0);
  return invoicesCount + notesCount + (!q.kind && !q.status ? debitNotes : 0);
}

/**
 * records.list `invoices`: kind invoice or credit_note, status in the invoice vocabulary, search
 * over number, customer name and notes (the same test as invoices.list); with kind or status the
 * total still comes from the count rollup.
 */
export const invoicesSource = defineSource<InvoiceDoc>({
  model: invoices,
  search: invoiceMatches,
  kinds: { invoice: { kind: 'invoice' }, credit_note: { kind: 'credit_note' }, debit_note: { kind: 'debit_note' } },
  statuses: INVOICE_STATUSES,
  row: invoiceRow,
  total: invoicesTotal,
});
