import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { findRental, RENTAL_VIEW_SCHEMA, rentals, rentalView } from '../model.ts';
import { releaseHold } from '../ops.ts';

/** Cancels a reservation that was not delivered nor invoiced; the resource is free again. */
export const cancel = defineTool({
  name: 'rentals.cancel',
  description: 'Cancel a reserved rental that has not been delivered nor invoiced; the item or asset is free to rent again over its time.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('rental', RENTAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const r = await findRental(ctx, input.id);
    if (r.status !== 'reserved' && r.status !== 'cancelled') throw new CuadraError('conflict', `Rental ${r._id} is ${r.status}; only a reservation is cancelled.`);
    if (r.periods.some((p) => p.invoice_id)) throw new CuadraError('conflict', `Rental ${r._id} has been invoiced; credit its invoices first.`);
    const after = r.status === 'cancelled' ? r : await rentals(ctx.db).findOneAndUpdate(
      { _id: r._id, status: 'reserved', rev: r.rev },
      { $set: { status: 'cancelled', updated_at: ctx.now }, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('conflict', `Rental ${r._id} changed meanwhile; nothing was done. Try again.`);
    await releaseHold(ctx.db, ctx.workspace, r.resource, r._id);
    return { rental: rentalView(after) };
  },
});
