import { createPositioned, dateInZone, markedWorkspaces, peerGraph, pullFeed, PullSchedule, type BackgroundJob, type FeedReader, type Logger, type PeerConfig } from '@cuadra/shared';
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
 * Never in a read: the pull runs in the background ({@link bookingPullJob}), woken by projects'
 * question after each change ({@link wakeBookingPull}).
 */
export interface BookingChangeRow {
  id: string;
  booking_id: string;
  rev: number;
  status: 'pending' | 'confirmed' | 'cancelled';
  type_name: string;
  start: string;
  end: string;
  host_time_zone: string;
  name: string;
  email: string;
  seq?: number | null;
}

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
  async apply(db, workspace, rows, _graph, now) {
    for (const row of rows) await applyRow(db, workspace, row, now);
    return [];
  },
};

/** How often the pull runs (`CRM_BOOKING_PULL_INTERVAL_MS`, default 2 s), and the longest a quiet workspace waits. */
const EVERY_MS = Number(process.env.CRM_BOOKING_PULL_INTERVAL_MS) > 0 ? Number(process.env.CRM_BOOKING_PULL_INTERVAL_MS) : 2_000;
const schedule = new PullSchedule(EVERY_MS, 5 * 60_000);

/** Projects asked about a booking (its question after each change): the workspace's feed grew. */
export function wakeBookingPull(workspace: string): void {
  schedule.wake(workspace);
}

/** One pass: every workspace woken or with a mark that is due. Answers how many rows it applied. */
export async function pullBookingsEverywhere(db: Connection, peers: PeerConfig | undefined, log: Logger, now: Date): Promise<number> {
  if (!peers?.urls.projects) return 0;
  let applied = 0;
  for (const workspace of schedule.due(await markedWorkspaces(db, BOOKING_CHANGES), now.getTime())) {
    const r = await pullFeed(BOOKING_CHANGES, db, workspace, peerGraph('crm', peers, workspace), now, log);
    applied += r.applied;
    schedule.pulled(workspace, r.applied > 0, now.getTime());
  }
  return applied;
}

/** The background pull of the bookings' changes (never in a read). */
export const bookingPullJob: BackgroundJob = {
  name: 'booking changes pull',
  everyMs: EVERY_MS,
  async run(db, now, log, peers) {
    await pullBookingsEverywhere(db, peers, log, now);
  },
};
