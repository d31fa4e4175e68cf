import { operationsMaintenance, REPAIR_AFTER_MS, type MaintenanceContext, type MaintenanceHook } from '@cuadra/shared';
import { bookingOperation, expireTombstones, withdrawRentalId } from './booking.ts';
import { HOLD_WATCH_ID, holdWatchEntry, rentalCalendars, rentalHoldWatch, watchHold } from './model.ts';

/** Most watched holds one sweep pass looks at. */
const WATCHED_PER_PASS = 200;

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
  await backfillHoldWatch(ctx.db);
  const cutoff = new Date(ctx.now.getTime() - REPAIR_AFTER_MS);
  // The holds not confirmed yet, by `_id` (model.ts, RentalHoldWatchDoc): never a query over the calendars.
  const entries = ((await rentalHoldWatch(ctx.db).findOne({ _id: HOLD_WATCH_ID }))?.holds ?? []).slice(0, WATCHED_PER_PASS);
  if (entries.length === 0) return 0;
  const byCalendar = new Map<string, string[]>();
  for (const entry of entries) {
    const [calendar, rentalId] = entry.split(' ');
    byCalendar.set(calendar, [...(byCalendar.get(calendar) ?? []), rentalId]);
  }
  const calendars = new Map((await rentalCalendars(ctx.db).find({ _id: { $in: [...byCalendar.keys()] } }).lean()).map((c) => [c._id, c]));
  const settled: string[] = [];
  let repaired = 0;
  for (const [calendar, rentalIds] of byCalendar) {
    const cal = calendars.get(calendar);
    for (const rentalId of rentalIds) {
      const h = cal?.holds.find((x) => x.rental_id === rentalId);
      // Confirmed, released, or never claimed (the booking died between the watch and its hold): nothing to watch.
      if (!cal || !h || h.confirmed) {
        settled.push(holdWatchEntry(calendar, rentalId));
        continue;
      }
      if (new Date(h.at) >= cutoff) continue; // a booking in flight
      const exists = !(await withdrawRentalId(ctx, cal.workspace, h.rental_id));
      await rentalCalendars(ctx.db).updateOne(
        { _id: cal._id, 'holds.rental_id': h.rental_id },
        exists ? { $set: { 'holds.$.confirmed': true }, $inc: { rev: 1 } } : { $pull: { holds: { rental_id: h.rental_id } }, $inc: { rev: 1 } },
      );
      settled.push(holdWatchEntry(calendar, rentalId));
      repaired++;
    }
  }
  // Taken out after: a pass that stops before this leaves them, and the next finds them settled.
  if (settled.length > 0) await rentalHoldWatch(ctx.db).updateOne({ _id: HOLD_WATCH_ID }, { $pullAll: { holds: settled } });
  return repaired;
};

/** The `migrations` mark of the watch's backfill. */
const HOLD_WATCH_BACKFILL = 'rental-hold-watch';

/** Connections whose store is known backfilled (one `_id` read per process, then none). */
const backfilled = new WeakSet<object>();

/**
 * The holds written before the watch existed, added to it once (idempotent: `$addToSet`; a pass that stops
 * half way leaves no mark and the next adds again). The one walk of the calendars, at the first pass.
 */
async function backfillHoldWatch(db: MaintenanceContext['db']): Promise<void> {
  if (backfilled.has(db)) return;
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (!(await migrations.findOne({ _id: HOLD_WATCH_BACKFILL }))) {
    for (const cal of await rentalCalendars(db).find({ 'holds.confirmed': false }, { _id: 1, holds: 1 }).lean()) {
      for (const h of cal.holds) if (!h.confirmed) await watchHold(db, cal._id, h.rental_id);
    }
    await migrations.updateOne({ _id: HOLD_WATCH_BACKFILL }, { $set: { at: new Date() } }, { upsert: true });
  }
  backfilled.add(db);
}

/** Forgets the backfill (tests only): as a store holding holds from before the watch looks at the upgrade. */
export async function forgetHoldWatchBackfill(db: MaintenanceContext['db']): Promise<void> {
  backfilled.delete(db);
  await db.collection<{ _id: string }>('migrations').deleteOne({ _id: HOLD_WATCH_BACKFILL });
}
