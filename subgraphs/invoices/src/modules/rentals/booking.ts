import { defineOperation, WATCH_MS, type OperationContext, type OperationKind } from '@cuadra/shared';
import { rentals, rentalWithdrawals, withdrawnRental, withdrawnWorkspace, type RentalDoc } from './model.ts';
import { confirmHold } from './ops.ts';

/**
 * A booking as a durable operation (shared/src/operations.ts): begun once the resource's hold is
 * claimed and before the rental is written; its one step confirms the hold for the rental. What it
 * buys is the answer after a kill: recovery finds the marker of the dead call, and
 * - the rental stored (its insert landed before recovery): the hold is confirmed and the call is
 *   answered from the rental — its key replays it, its approval ends `executed` with it — as the
 *   other creates' recoveries answer their record;
 * - the rental absent: its id is withdrawn there and then ({@link withdrawRentalId}), so the dead
 *   attempt's insert, applied late, is refused and cannot make a rental the call's `outcome_unknown`
 *   (or `failed` approval) does not account for. The hold is released by the hold sweep
 *   (maintenance.ts), which finds the id withdrawn.
 */
export const bookingOperation: OperationKind<RentalDoc> = defineOperation<RentalDoc>({
  kind: 'rental_booking',
  load: (ctx, id) => rentals(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean() as Promise<RentalDoc | null>,
  steps: [
    async function confirmItsHold(ctx, r) {
      await confirmHold(ctx, r.resource, r._id);
      return r;
    },
  ],
  withdrawId: (ctx, id) => withdrawRentalId(ctx, ctx.workspace, id),
});

/**
 * Stores the tombstone of a rental id whose booking never wrote its rental ({@link withdrawnRental});
 * true when the id is withdrawn (now, or earlier), false when the rental itself is stored under it.
 * The insert is the decision: it fails as a duplicate exactly when the rental landed first.
 */
export async function withdrawRentalId(ctx: Pick<OperationContext, 'db' | 'now'>, workspace: string, rentalId: string): Promise<boolean> {
  // First, so no tombstone is ever left without its expiry (one for a rental that stands expires nothing: see expireTombstones).
  await rentalWithdrawals(ctx.db).updateOne({ _id: rentalId }, { $setOnInsert: { workspace, at: ctx.now } }, { upsert: true });
  try {
    await rentals(ctx.db).collection.insertOne(withdrawnRental(workspace, rentalId, ctx.now) as never);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    return !(await rentals(ctx.db).exists({ _id: rentalId, workspace }));
  }
}

/**
 * How long a tombstone is kept: as long as an insert under its id can still land. The ids are random
 * (a retry books under a new one), so the only such insert is the dead attempt's own, already sent —
 * bytes in the store's receive buffer, applied when the store reads them: seconds, under load tens of
 * seconds. An hour, the bound the payments' watch for late records keeps (WATCH_MS, operations.ts).
 * A live booking that stalls longer than that between its hold and its insert is the limit (its hold
 * is released a minute after it is taken, REPAIR_AFTER_MS, and no tombstone would refuse it then).
 */
export const TOMBSTONE_KEPT_MS = WATCH_MS;

/** Most tombstones one pass removes. */
const EXPIRED_PER_PASS = 200;

/**
 * Removes the tombstones withdrawn more than {@link TOMBSTONE_KEPT_MS} ago, then their withdrawal
 * records: only a tombstone is deleted (its `withdrawn:` workspace), never a rental that stood under
 * the id. Reads the withdrawals, a collection holding what crashes left in the last hour.
 * @returns how many withdrawals it ended
 */
export async function expireTombstones(ctx: Pick<OperationContext, 'db' | 'now'>): Promise<number> {
  await dateOlderTombstones(ctx);
  const expired = await rentalWithdrawals(ctx.db).find({ at: { $lt: new Date(ctx.now.getTime() - TOMBSTONE_KEPT_MS) } }).limit(EXPIRED_PER_PASS).lean();
  for (const w of expired) {
    await rentals(ctx.db).collection.deleteOne({ _id: w._id, workspace: withdrawnWorkspace(w.workspace) } as never);
    await rentalWithdrawals(ctx.db).deleteOne({ _id: w._id, at: w.at });
  }
  return expired.length;
}

/**
 * Gives the tombstones stored before withdrawal records existed (the tenth session's sweep) a record
 * each, dated when they were withdrawn, so they expire like the others: one scan of `rentals` per
 * store, ever, marked done in `migrations` (each pass after reads that one marker by `_id`).
 */
async function dateOlderTombstones(ctx: Pick<OperationContext, 'db'>): Promise<void> {
  const migrations = ctx.db.collection<{ _id: string; at: Date }>('migrations');
  const marker = 'rental-tombstones-dated';
  if (await migrations.findOne({ _id: marker })) return;
  const older = rentals(ctx.db).collection.find({ workspace: { $regex: '^withdrawn:' } } as never, { projection: { _id: 1, workspace: 1, withdrawn_at: 1 } });
  for await (const t of older as AsyncIterable<{ _id: string; workspace: string; withdrawn_at?: Date }>) {
    const workspace = t.workspace.slice('withdrawn:'.length);
    await rentalWithdrawals(ctx.db).updateOne({ _id: t._id }, { $setOnInsert: { workspace, at: t.withdrawn_at ?? new Date(0) } }, { upsert: true });
  }
  await migrations.updateOne({ _id: marker }, { $set: { at: new Date() } }, { upsert: true });
}
