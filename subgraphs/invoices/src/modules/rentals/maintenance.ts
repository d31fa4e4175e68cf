import { operationsMaintenance, REPAIR_AFTER_MS, type MaintenanceHook } from '@cuadra/shared';
import { bookingOperation, expireTombstones, withdrawRentalId } from './booking.ts';
import { rentalCalendars } from './model.ts';

/** Most calendars one sweep pass looks at. */
const BATCH = 50;

/** The bookings' markers: done ones removed after an hour, stale ones finished or their ids withdrawn (booking.ts). */
const bookings = operationsMaintenance([bookingOperation]);

/** The sweep's share of rentals: the bookings' markers, the holds no booking confirmed, the tombstones no insert can meet any more. */
export const rentalsMaintenance: MaintenanceHook = async (ctx) => (await bookings(ctx)) + (await releaseDeadHolds(ctx)) + (await expireTombstones(ctx));

/**
 * The holds no booking confirmed: a hold a booking took and never confirmed (the process died
 * before the rental was written) is confirmed when its rental exists, else released — so a crash
 * never leaves a resource blocked by a rental that is not there.
 *
 * Before releasing, the pass withdraws the rental's id: it stores a tombstone under it (one insert,
 * withdrawRentalId, booking.ts), so the dead attempt's insert, if the store applies it only now, is
 * refused on `_id` instead of leaving a `reserved` rental with no hold (an overlapping booking of
 * the same resource would then be accepted: a double booking). The insert is the decision: it
 * fails as a duplicate exactly when the rental landed first, and then the hold is confirmed for it.
 */
const releaseDeadHolds: MaintenanceHook = async (ctx) => {
  const cutoff = new Date(ctx.now.getTime() - REPAIR_AFTER_MS);
  const calendars = await rentalCalendars(ctx.db).find({ holds: { $elemMatch: { confirmed: false, at: { $lt: cutoff } } } }).limit(BATCH).lean();
  let repaired = 0;
  for (const cal of calendars) {
    for (const h of cal.holds) {
      if (h.confirmed || new Date(h.at) >= cutoff) continue;
      const exists = !(await withdrawRentalId(ctx, cal.workspace, h.rental_id));
      await rentalCalendars(ctx.db).updateOne(
        { _id: cal._id, 'holds.rental_id': h.rental_id },
        exists ? { $set: { 'holds.$.confirmed': true }, $inc: { rev: 1 } } : { $pull: { holds: { rental_id: h.rental_id } }, $inc: { rev: 1 } },
      );
      repaired++;
    }
  }
  return repaired;
};

