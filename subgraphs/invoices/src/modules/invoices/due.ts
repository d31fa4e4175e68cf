import type { Connection } from 'mongoose';
import { DueIndex, EVERY_WORKSPACE } from '../../books/due-index.ts';
import { invoices, type InvoiceDoc } from './model.ts';

/**
 * Open invoices and debit notes by (workspace, due date), read by the receivables lane by `_id`
 * (books/due-index.ts), as bills are for the payables lane: posting and re-opening add before the
 * document is open, paying, crediting and cancelling pull after. Each add watches its day, so the
 * sweep notes the invoice when its due date passes (overdue.ts).
 */
export const invoicesDue = new DueIndex('invoice_due_index', { watchOverdue: true });

/**
 * Open invoices of plan subscriptions, of every workspace, by due day (`*|<date>`,
 * books/due-index.ts {@link EVERY_WORKSPACE}): what the plans' dunning reads (plans/dunning.ts) —
 * the days its steps can still reach, by `_id` — instead of scanning every workspace's invoices.
 * Kept by the open-item engine beside the lane's index (RECEIVABLES `dueAcross`).
 */
export const subscriptionInvoicesDue = new DueIndex('subscription_invoice_due_index');

/** An invoice a plan subscription issued (what the dunning chases). */
export function isSubscriptionInvoice(i: Pick<InvoiceDoc, 'source'>): boolean {
  return typeof i.source?.subscription_id === 'string';
}

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
 * Indexes the open subscription invoices posted before {@link subscriptionInvoicesDue} existed,
 * once per database (the marker in `migrations`), as {@link backfillInvoicesDue} does.
 */
export async function backfillSubscriptionInvoicesDue(db: Connection): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: 'subscription-invoice-due-index' })) return 0;
  const open = await invoices(db).find({ 'source.subscription_id': { $type: 'string' }, status: { $in: ['posted', 'partially_paid'] }, kind: { $in: ['invoice', 'debit_note'] } }, { due_date: 1 }).lean();
  await subscriptionInvoicesDue.addMany(db, open.map((i) => ({ workspace: EVERY_WORKSPACE, date: i.due_date, id: i._id })));
  await migrations.updateOne({ _id: 'subscription-invoice-due-index' }, { $set: { at: new Date() } }, { upsert: true });
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
