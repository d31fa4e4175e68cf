import { createPositioned, CuadraError, dateInZone, feedPullJob, type BookingChangeRow, type FeedReader } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { partyForEmail } from '../parties/by_email.ts';
import { activities, type ActivityDoc } from './model.ts';

/**
 * A booking reaches the CRM (issue 35; ARCHITECTURE.md, "Bookings reach CRM and finance"): crm pulls
 * the projects subgraph's booking change feed (`booking_changes_since`, the read-only service
 * assertion) and makes of each booking its booker's party (the workspace's party holding the
 * booker's e-mail, else one made for it, parties/by_email.ts) and one meeting activity on it, whose
 * id follows from the booking's (`act_<booking id>`), so a retry, two pulls at once or a pull
 * restarted after a crash write it once. A later state of the booking (moved, confirmed,
 * cancelled) updates that activity — only forward: the activity keeps the booking's rev it shows,
 * and an older row changes nothing. A cancelled booking's activity is closed (done) and says so.
 * Never in a read: the pull runs in the background ({@link bookingPull}), woken by projects'
 * question after each change ({@link bookingPull}).
 */

/** The activity a booking makes: the same id on every retry. */
export function bookingActivityId(bookingId: string): string {
  return `act_${bookingId}`;
}

const STATUS_WORDS: Record<BookingChangeRow['status'], string> = { pending: 'por confirmar', confirmed: 'confirmada', cancelled: 'cancelada' };

/** The activity as a booking's state makes it. */
function activityOf(row: BookingChangeRow, workspace: string, partyId: string, now: Date, createdAt: Date): ActivityDoc {
  const start = new Date(row.start);
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: row.host_time_zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(start);
  const cancelled = row.status === 'cancelled';
  return {
    _id: bookingActivityId(row.booking_id), workspace, kind: 'meeting', subject: `${row.type_name}: ${row.name}`.slice(0, 200),
    notes: `Reserva ${row.booking_id} (${STATUS_WORDS[row.status]}), ${row.email}.`, deal_id: null, party_id: partyId, owner_id: null,
    due_date: dateInZone(start, row.host_time_zone), due_time: time, status: cancelled ? 'done' : 'open', done_at: cancelled ? now : null,
    booking: { id: row.booking_id, rev: row.rev, status: row.status }, created_at: createdAt, updated_at: now,
  };
}

/**
 * Applies a booking's state: the party and activity made once, or the activity brought forward to
 * this rev. The agenda's events lane already shows the booking itself (projects' calendar event), so
 * these activities are not filed in crm's due-day index: the lane would show each booking twice.
 */
async function applyRow(db: Connection, workspace: string, row: BookingChangeRow, now: Date): Promise<void> {
  const model = activities(db);
  const id = bookingActivityId(row.booking_id);
  const held = await model.findOne({ _id: id, workspace }).lean<ActivityDoc>();
  if (held) {
    if ((held.booking?.rev ?? 0) >= row.rev) return;
    const next = activityOf(row, workspace, held.party_id ?? '', now, held.created_at);
    const { _id, workspace: _ws, created_at: _c, party_id: _p, ...set } = next;
    await model.updateOne({ _id: id, workspace, 'booking.rev': { $lt: row.rev } }, { $set: set });
    return;
  }
  const { party } = await partyForEmail({ db, workspace, now }, row.email, () => ({ name: row.name, kind: 'customer', email: row.email, tags: ['from_booking'] }));
  try {
    await createPositioned(model, activityOf(row, workspace, party._id, now, now));
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    // Made meanwhile by another pull: bring it forward instead.
    await applyRow(db, workspace, row, now);
  }
}

/** The reader of the bookings' changes (shared feed-reader.ts); marks in `booking_pull_marks`. */
export const BOOKING_CHANGES: FeedReader<BookingChangeRow> = {
  subgraph: 'projects',
  source: 'booking_changes_since',
  marks: 'booking_pull_marks',
  async apply(db, workspace, rows, _graph, now, log) {
    for (const row of rows) {
      try {
        await applyRow(db, workspace, row, now);
      } catch (err) {
        // A booker crm refuses as a party would be refused on every retry: logged, and the feed goes on.
        if (!(err instanceof CuadraError)) throw err;
        log?.warn({ err: err.message, code: err.code, booking: row.booking_id, workspace }, 'a booking could not become a CRM activity');
      }
    }
    return [];
  },
};

/** How often the pull runs (`CRM_BOOKING_PULL_INTERVAL_MS`, default 2 s). */
const EVERY_MS = Number(process.env.CRM_BOOKING_PULL_INTERVAL_MS) > 0 ? Number(process.env.CRM_BOOKING_PULL_INTERVAL_MS) : 2_000;

/** The background pull of the bookings' changes (never in a read), and its hint: projects asked about a booking after a change. */
export const bookingPull = feedPullJob(BOOKING_CHANGES, { name: 'booking changes pull', service: 'crm', everyMs: EVERY_MS });
