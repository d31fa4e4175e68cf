import { REPAIR_AFTER_MS, type MaintenanceHook } from '@cuadra/shared';
import { rentalCalendars, rentals } from './model.ts';

/** Most calendars one sweep pass looks at. */
const BATCH = 50;

/**
 * The sweep's share of rentals: a hold a booking took and never confirmed (the process died
 * before the rental was written) is confirmed when its rental exists, else released — so a crash
 * never leaves a resource blocked by a rental that is not there.
 */
export const rentalsMaintenance: MaintenanceHook = async (ctx) => {
  const cutoff = new Date(ctx.now.getTime() - REPAIR_AFTER_MS);
  const calendars = await rentalCalendars(ctx.db).find({ holds: { $elemMatch: { confirmed: false, at: { $lt: cutoff } } } }).limit(BATCH).lean();
  let repaired = 0;
  for (const cal of calendars) {
    for (const h of cal.holds) {
      if (h.confirmed || new Date(h.at) >= cutoff) continue;
      const exists = await rentals(ctx.db).exists({ _id: h.rental_id });
      await rentalCalendars(ctx.db).updateOne(
        { _id: cal._id, 'holds.rental_id': h.rental_id },
        exists ? { $set: { 'holds.$.confirmed': true }, $inc: { rev: 1 } } : { $pull: { holds: { rental_id: h.rental_id } }, $inc: { rev: 1 } },
      );
      repaired++;
    }
  }
  return repaired;
};
