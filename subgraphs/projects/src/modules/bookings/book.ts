import { addToDays, daysTouched } from '../../calendar/day-index.ts';
import { CuadraError, createPositioned, newId, type PeerGraph } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { dateIn, instantToLocal, wallClockText } from '../../calendar/time.ts';
import { calendarEvents, type CalendarEventDoc } from '../calendar_events/model.ts';
import { assertOpen, changeEvent, fileEvent } from '../calendar_events/store.ts';
import { bookingTypes, type BookingTypeDoc } from '../booking_types/model.ts';
import { recordChange } from './changes.ts';
import { slotsOf } from './availability.ts';
import { cellsOf, claimCells, claimDay, ORPHAN_CLAIM_MS, releaseCells } from './claims.ts';
import { askerZone, checkAnswers } from './fields.ts';
import { mailInvitation } from './invitation.ts';
import { bookingDays, bookings, type BookingDoc } from './model.ts';

/** The active booking type of this workspace, or `not_found` (archived: `conflict`). */
export async function activeType(db: Connection, workspace: string, id: string, field?: string): Promise<BookingTypeDoc> {
  const type = await bookingTypes(db).findOne({ _id: id, workspace }).lean<BookingTypeDoc>();
  if (!type) {
    if (field) throw new CuadraError('invalid_input', `No booking type ${id} exists in this workspace.`, { field });
    throw new CuadraError('not_found', `No booking type ${id} exists in this workspace.`);
  }
  if (type.status !== 'active') throw new CuadraError('conflict', `The booking type ${type.name} is archived: nothing can be booked on it.`);
  return type;
}

/**
 * Checks that `start` is a slot the type offers: a time it never offers (outside its hours, on a
 * holiday, before the notice, beyond the window, off its step) is `invalid_input` at /start; one it
 * offers but that is taken is `conflict`.
 */
export async function checkSlot(db: Connection, type: BookingTypeDoc, start: Date, now: Date, zone: string, except?: string): Promise<void> {
  const until = new Date(start.getTime() + 60_000);
  const free = await slotsOf(db, type, start, until, now, zone, { except });
  if (free.some((s) => s.start === start.toISOString())) return;
  const open = await slotsOf(db, { ...type, daily_limit: null }, start, until, now, zone, { ignoreBusy: true });
  if (open.some((s) => s.start === start.toISOString())) throw new CuadraError('conflict', 'That time is no longer available; choose another slot.');
  throw new CuadraError('invalid_input', `${instantToLocal(start, type.time_zone)} (${type.time_zone}) is not a time ${type.name} can be booked: outside its hours, on a holiday, too soon or too far ahead.`, { field: '/start' });
}

/** What a new booking is made of. */
export interface NewBooking { type: BookingTypeDoc; start: Date; name: string; email: string; zone: string; answers: Record<string, string>; now: Date; country?: string; graph?: PeerGraph }

/**
 * Books a slot: claims its cells (the unique claim is what refuses the 2nd to 10th of ten bookings of
 * one slot), then a place of the type's day, then writes the booking and its calendar event. A refusal
 * gives back every claim taken; nothing else was written yet. A crash after the booking is written and
 * before its event is repaired by {@link writeMissingEvents}.
 */
export async function book(db: Connection, workspace: string, n: NewBooking): Promise<{ booking: BookingDoc; event: CalendarEventDoc }> {
  const { type, start, now } = n;
  const end = new Date(start.getTime() + type.duration_min * 60_000);
  const id = newId('bkg');
  const cells = cellsOf(workspace, start, end, type.buffer_before_min, type.buffer_after_min);
  if (!(await claimCells(db, cells, id, now))) throw new CuadraError('conflict', 'That time was just booked by someone else; choose another slot.');
  let dayClaim: string | null = null;
  if (type.daily_limit !== null) {
    dayClaim = await claimDay(db, workspace, type._id, dateIn(start, type.time_zone), type.daily_limit, id, now);
    if (!dayClaim) {
      await releaseCells(db, cells, id);
      throw new CuadraError('conflict', `${type.name} is fully booked that day.`);
    }
  }
  const status = type.confirmation_required ? 'pending' : 'confirmed';
  const eventId = newId('evt');
  const booking: BookingDoc = {
    _id: id, workspace, type_id: type._id, type_name: type.name, status, start, end, buffer_before_min: type.buffer_before_min, buffer_after_min: type.buffer_after_min,
    time_zone: n.zone, name: n.name, email: n.email.toLowerCase(), answers: n.answers, event_id: eventId, claims: cells, day_claim: dayClaim,
    price: type.price ? { ...type.price } : null, country: n.country ?? null, invited_at: null, event_pending: true, feed_pending: true, rev: 1, created_at: now, updated_at: now,
  };
  await addToDays(db, bookingDays, workspace, daysTouched(start, end, 1), id);
  await createPositioned(bookings(db), booking);
  const event = bookingEvent(booking, type, now);
  await writeBookingEvent(db, booking, event);
  // The booking stands once written: a failure here leaves its feed_pending flag for the background repair.
  await recordChange(db, booking, now, n.graph, type.time_zone).catch(() => undefined);
  return { booking, event };
}

/** The calendar event of a booking as it stands (its time, its status, the booker and the host as attendees). */
export function bookingEvent(b: BookingDoc, type: Pick<BookingTypeDoc, 'name' | 'location' | 'video_url' | 'host_email' | 'time_zone'>, now: Date): CalendarEventDoc {
  const local = (d: Date) => instantToLocal(d, type.time_zone);
  const title = `${type.name}: ${b.name}`;
  return {
    _id: b.event_id, workspace: b.workspace, title, title_lc: title.toLowerCase(), description: null,
    location: [type.location, type.video_url].filter(Boolean).join(' · ') || null, kind: 'meeting',
    status: b.status === 'cancelled' ? 'cancelled' : b.status === 'pending' ? 'tentative' : 'confirmed',
    all_day: false, time_zone: type.time_zone, start_local: local(b.start), end_local: local(b.end), start: b.start, end: b.end, until: b.end, rrule: null, exdates: [], overrides: [],
    attendees: [{ email: b.email, name: b.name, party_id: null }, ...(type.host_email ? [{ email: type.host_email, name: null, party_id: null }] : [])],
    reminders: [], source: 'booking', booking_id: b._id, rev: 1, created_at: now, updated_at: now,
  };
}

/**
 * Writes a booking's event (under the id the booking already names, so a second writer finds it
 * there) and clears the booking's `event_pending`. A crash before that leaves the flag set, and
 * {@link writeMissingEvents} finishes the job.
 */
async function writeBookingEvent(db: Connection, b: BookingDoc, event: CalendarEventDoc): Promise<void> {
  await fileEvent(db, event);
  try {
    await createPositioned(calendarEvents(db), event);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  await bookings(db).updateOne({ _id: b._id }, { $set: { event_pending: false } });
}

/**
 * The background repair of bookings a crash left without their calendar event: bookings still
 * `event_pending` after {@link ORPHAN_CLAIM_MS} (no booking call takes that long) get the event of
 * what they are now (moved, confirmed or cancelled meanwhile). Answers how many it wrote.
 */
export async function writeMissingEvents(db: Connection, now: Date): Promise<number> {
  const stuck = await bookings(db).find({ event_pending: true, created_at: { $lte: new Date(now.getTime() - ORPHAN_CLAIM_MS) } }).limit(100).lean<BookingDoc[]>();
  let written = 0;
  for (const b of stuck) {
    if (await calendarEvents(db).exists({ _id: b.event_id, workspace: b.workspace })) {
      await bookings(db).updateOne({ _id: b._id }, { $set: { event_pending: false } });
      continue;
    }
    const type = await bookingTypes(db).findOne({ _id: b.type_id, workspace: b.workspace }).lean<BookingTypeDoc>();
    if (!type) continue;
    await writeBookingEvent(db, b, bookingEvent(b, type, now));
    written++;
  }
  return written;
}

/**
 * Changes a booking by one conditional write on its rev and status; `conflict` when it changed
 * meanwhile. Then its new state goes to the change feed crm and finance read (changes.ts), told
 * through `graph` when given.
 */
export async function writeBooking(db: Connection, before: BookingDoc, set: Partial<BookingDoc>, now: Date, graph?: PeerGraph): Promise<BookingDoc> {
  const after = { ...before, ...set, rev: before.rev + 1, updated_at: now, feed_pending: true };
  const written = await bookings(db).updateOne({ _id: before._id, workspace: before.workspace, rev: before.rev, status: before.status }, { $set: { ...set, rev: after.rev, updated_at: now, feed_pending: true } });
  if (written.matchedCount !== 1) throw new CuadraError('conflict', `The booking ${before._id} changed meanwhile; read it again and retry.`);
  // The change stands once written (a caller must not undo it for this): the flag stays for the background repair.
  await recordChange(db, after, now, graph).catch(() => undefined);
  return after;
}

/** The booking of this workspace, or `not_found`. */
export async function bookingOf(db: Connection, workspace: string, id: string): Promise<BookingDoc> {
  const b = await bookings(db).findOne({ _id: id, workspace }).lean<BookingDoc>();
  if (!b) throw new CuadraError('not_found', `No booking ${id} exists in this workspace.`);
  return b;
}

/** Brings the booking's calendar event in line with it. */
export async function syncEvent(db: Connection, b: BookingDoc, zone: string, now: Date): Promise<void> {
  await changeEvent(db, b.workspace, b.event_id, now, (e) => {
    assertOpen(e, true);
    if (b.status === 'cancelled') return { ...e, status: 'cancelled' };
    return {
      ...e, start: b.start, end: b.end, until: b.end, start_local: instantToLocal(b.start, zone), end_local: instantToLocal(b.end, zone),
      status: b.status === 'confirmed' ? 'confirmed' : 'tentative',
    };
  }).catch((err: unknown) => {
    // A booking whose event a crash never wrote has nothing to bring in line.
    if ((err as { code?: string }).code !== 'not_found') throw err;
  });
}

/** What a booker gives (bookings.create's input, the public page's form). */
export interface BookerInput { start: string; name: string; email: string; time_zone?: string; answers?: Record<string, string> }

/**
 * Books a slot for a booker (bookings.create and the public page): the zone and answers checked,
 * the slot checked, {@link book}, then the `.ics` invitation e-mailed. A booking whose invitation
 * could not be sent stands (its `invited` says so).
 */
export async function bookAndInvite(db: Connection, workspace: string, type: BookingTypeDoc, input: BookerInput, now: Date, log: { warn(o: object, m: string): void }, caller: { country?: string; graph?: PeerGraph } = {}): Promise<BookingDoc> {
  const zone = askerZone(type, input.time_zone);
  const answers = checkAnswers(type, input.answers);
  const start = new Date(input.start);
  await checkSlot(db, type, start, now, zone);
  const { booking } = await book(db, workspace, { type, start, name: input.name.trim(), email: input.email, zone, answers, now, ...caller });
  try {
    if (await mailInvitation(booking, type, 'REQUEST', wallClockText(start, zone), now)) {
      await bookings(db).updateOne({ _id: booking._id }, { $set: { invited_at: now } });
      booking.invited_at = now;
    }
  } catch (err) {
    log.warn({ err, booking: booking._id }, 'booking invitation not sent');
  }
  return booking;
}
