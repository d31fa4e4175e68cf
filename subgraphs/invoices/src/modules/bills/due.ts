import type { Connection } from 'mongoose';
import { DueIndex } from '../../books/due-index.ts';
import { bills, type BillDoc } from './model.ts';

/**
 * Open bills by (workspace, due date), read by the payables lane by `_id` (books/due-index.ts):
 * posting and re-opening add before the bill is open, paying and crediting pull after.
 */
export const billsDue = new DueIndex('bill_due_index');

/** Open as the payables lane means it: a posted or partly paid bill (never a credit note). */
export function billIsOpen(b: Pick<BillDoc, 'status' | 'kind'>): boolean {
  return b.kind !== 'credit_note' && (b.status === 'posted' || b.status === 'partially_paid');
}

/**
 * Indexes the bills that were open before the index existed, once per database (a marker in
 * `migrations`; later starts read the marker only). Idempotent: `$addToSet`, so a start that died
 * half-way and runs again adds nothing twice. Bills posted while it runs index themselves.
 */
export async function backfillBillsDue(db: Connection): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: 'bill-due-index' })) return 0;
  const open = await bills(db).find({ status: { $in: ['posted', 'partially_paid'] }, kind: { $ne: 'credit_note' } }, { workspace: 1, due_date: 1 }).lean();
  await billsDue.addMany(db, open.map((b) => ({ workspace: b.workspace, date: b.due_date, id: b._id })));
  await migrations.updateOne({ _id: 'bill-due-index' }, { $set: { at: new Date() } }, { upsert: true });
  return open.length;
}
