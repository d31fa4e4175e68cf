import { defineModule, defineSource } from '@cuadra/shared';
import { writeMissingEvents } from './book.ts';
import { bookingChanges, bookingChangesSinceSource, publishStuckChanges } from './changes.ts';
import { ORPHAN_CLAIM_MS, removeExpiredClaims } from './claims.ts';
import { bookingClaims, bookingDays, bookingMatches, bookings, BOOKING_STATUSES, type BookingDoc } from './model.ts';
import { availability } from './tools/availability.ts';
import { cancel } from './tools/cancel.ts';
import { confirm } from './tools/confirm.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { reschedule } from './tools/reschedule.ts';

/** Bookings of booking types: availability, booking without double booking, confirmation, rescheduling, cancellation. */
export const bookingsModule = defineModule({
  name: 'bookings',
  tools: [availability, create, confirm, reschedule, cancel, list, get],
  models: [bookings, bookingDays, bookingClaims, bookingChanges],
  listed: [{ model: bookings }],
  // As often as a booking call's claims may be taken for a crash's (at most every 30 s).
  background: [{ name: 'booking events', everyMs: Math.min(30_000, ORPHAN_CLAIM_MS), run: async (db, now, _log, peers) => { await writeMissingEvents(db, now); await publishStuckChanges(db, now, ORPHAN_CLAIM_MS, peers); } }],
  // Claims of times that have passed guard nothing: the sweep removes them, reads never do.
  maintenance: ({ db, now }) => removeExpiredClaims(db, now),
  reads: {
    // crm and finance pull the bookings' changes (changes.ts): a feed, never published in the catalog.
    feeds: { booking_changes_since: bookingChangesSinceSource },
    sources: {
      bookings: defineSource<BookingDoc>({
        model: bookings, search: bookingMatches, statuses: BOOKING_STATUSES,
        row: (b) => ({ id: b._id, type_id: b.type_id, type_name: b.type_name, status: b.status, start: b.start.toISOString(), end: b.end.toISOString(), name: b.name, email: b.email, time_zone: b.time_zone, created_at: b.created_at.toISOString() }),
      }),
    },
  },
});
