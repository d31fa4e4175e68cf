import type { Connection } from 'mongoose';
import { DueIndex } from '../../books/due-index.ts';
import { invoices, type InvoiceDoc } from './model.ts';

/**
 * Open invoices and debit notes by (workspace, due date), read by the receivables lane by `_id`
 * (books/due-index.ts), as bills are for the payables lane: posting and re-opening add before the
 * document is open, paying, crediting and cancelling pull after. Each add watches its day, so the
 * sweep notes the invoice when its due date passes (overdue.ts).
 */
export const invoicesDue = new DueIndex('invoice_due_index', { watchOverdue: true });

/** Open as the receivables lane means it: a posted or partly paid invoice or debit note (never a credit note). */
export function invoiceIsOpen(i: Pick<InvoiceDoc, 'status' | 'kind'>): boolean {
  return (i.kind === 'invoice' || i.kind === 'debit_note') && (i.status === 'posted' || i.status === 'partially_paid');
}

/**
 * Indexes the invoices that were open before the index existed, once per database (a marker in
 * `migrations`; later starts read the marker only). Idempotent (`$addToSet`): a start that died
 * half-way adds nothing twice when it runs again; invoices posted meanwhile index themselves.
 */
export async function backfillInvoicesDue(db: Connection): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: 'invoice-due-index' })) return 0;
  const open = await invoices(db).find({ status: { $in: ['posted', 'partially_paid'] }, kind: { $in: ['invoice', 'debit_note'] } }, { workspace: 1, due_date: 1 }).lean();
  await invoicesDue.addMany(db, open.map((i) => ({ workspace: i.workspace, date: i.due_date, id: i._id })));
  await migrations.updateOne({ _id: 'invoice-due-index' }, { $set: { at: new Date() } }, { upsert: true });
  return open.length;
}

/**
 * Watches the days indexed before days were watched (the `invoice.overdue` event, overdue.ts),
 * once per database: their open invoices past due are noted by the next sweeps, once each.
 */
export async function watchIndexedDays(db: Connection): Promise<void> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: 'invoice-due-watch' })) return;
  await db.collection(invoicesDue.collection).updateMany({ 'ids.0': { $exists: true } }, { $set: { watch: true } });
  await migrations.updateOne({ _id: 'invoice-due-watch' }, { $set: { at: new Date() } }, { upsert: true });
}
