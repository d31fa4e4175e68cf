import { defineOperation, type OperationContext, type OperationKind } from '@cuadra/shared';
import { rentals, withdrawnRental, type RentalDoc } from './model.ts';
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
  try {
    await rentals(ctx.db).collection.insertOne(withdrawnRental(workspace, rentalId, ctx.now) as never);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    return !(await rentals(ctx.db).exists({ _id: rentalId, workspace }));
  }
}
