import { addDays, calendarDays, CuadraError, isColombianHoliday } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { byIds, idsOfDays } from '../../calendar/day-index.ts';
import { dateIn, dayStart, isoIn, localToInstant, weekday, WORKSPACE_ZONE } from '../../calendar/time.ts';
import { occurrencesIn } from '../calendar_events/store.ts';
import { minutesOf } from '../booking_types/fields.ts';
import { WEEKDAYS, type BookingTypeDoc } from '../booking_types/model.ts';
import { bookingDays, bookings, type BookingDoc } from './model.ts';

/** A busy stretch of the workspace's calendar. */
export interface Busy { start: number; end: number }

/** One bookable slot. */
export interface Slot {
  start: string;
  end: string;
  /** The start in the asker's zone, with its offset: `2026-07-06T16:00:00+02:00`. */
  local: string;
  /** The asker's date and clock time of the start. */
  date: string;
  time: string;
}

/** The longest range availability answers at once. */
export const MAX_RANGE_DAYS = 62;

/** Other sources of busy time (the connected calendars), filled in by the module that owns them. */
export type BusyReader = (db: Connection, workspace: string, from: Date, to: Date) => Promise<Busy[]>;
const busyReaders: BusyReader[] = [];

/** Adds a source of busy time every availability reads (connected calendars register theirs). */
export function addBusyReader(read: BusyReader): void {
  if (!busyReaders.includes(read)) busyReaders.push(read);
}

/** The live bookings (pending or confirmed) starting on the workspace's days around [from, to). */
export async function liveBookings(db: Connection, workspace: string, from: Date, to: Date): Promise<BookingDoc[]> {
  const ids = await idsOfDays(db, bookingDays, workspace, addDays(dateIn(from, WORKSPACE_ZONE), -1), dateIn(to, WORKSPACE_ZONE));
  return (await byIds<BookingDoc>(bookings(db), workspace, ids)).filter((b) => b.status !== 'cancelled');
}

/**
 * The slots of a booking type starting within [from, to) (instants), less what is busy: the
 * workspace's own events (not those bookings made: a booking counts with its buffers), live
 * bookings with their buffers, and the connected calendars' busy times; laid out on the type's
 * wall clock from its weekly hours or the day's override, holidays closed unless the type keeps them,
 * after the minimum notice and within the booking window, at most the daily limit per day.
 * `except` leaves one booking out (a reschedule frees its own time); `ignoreBusy` answers what the
 * type offers at all.
 */
export async function slotsOf(db: Connection, type: BookingTypeDoc, from: Date, to: Date, now: Date, askerZone: string, opts: { except?: string; ignoreBusy?: boolean } = {}): Promise<Slot[]> {
  const except = opts.except;
  const zone = type.time_zone;
  const pad = (type.buffer_before_min + type.buffer_after_min + type.duration_min) * 60_000 + 86_400_000;
  const [events, booked, ...others] = opts.ignoreBusy ? [[], [], []] : await Promise.all([
    occurrencesIn(db, type.workspace, new Date(from.getTime() - pad), new Date(to.getTime() + pad)),
    liveBookings(db, type.workspace, new Date(from.getTime() - pad), new Date(to.getTime() + pad)),
    ...busyReaders.map((r) => r(db, type.workspace, new Date(from.getTime() - pad), new Date(to.getTime() + pad))),
  ]);
  const busy: Busy[] = [
    ...events.filter((o) => !o.event.booking_id).map((o) => ({ start: o.start.getTime(), end: o.end.getTime() })),
    ...booked.filter((b) => b._id !== except).map((b) => ({ start: b.start.getTime() - b.buffer_before_min * 60_000, end: b.end.getTime() + b.buffer_after_min * 60_000 })),
    ...others.flat(),
  ];
  const perDay = new Map<string, number>();
  for (const b of booked) if (b.type_id === type._id && b._id !== except) perDay.set(dateIn(b.start, zone), (perDay.get(dateIn(b.start, zone)) ?? 0) + 1);
  const earliest = now.getTime() + type.min_notice_min * 60_000;
  const latest = now.getTime() + type.window_days * 86_400_000;
  const out: Slot[] = [];
  for (const date of calendarDays(dateIn(from, zone), dateIn(new Date(to.getTime() - 1), zone))) {
    if (type.exclude_holidays && isColombianHoliday(date)) continue;
    if (type.daily_limit !== null && (perDay.get(date) ?? 0) >= type.daily_limit) continue;
    const override = type.overrides.find((o) => o.date === date);
    const hours = override ? override.intervals : type.weekly[WEEKDAYS[weekday(date) - 1]] ?? [];
    for (const iv of hours) {
      for (let m = minutesOf(iv.start); m + type.duration_min <= minutesOf(iv.end); m += type.slot_step_min) {
        const clock = `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
        let start: Date;
        try {
          start = localToInstant(`${date}T${clock}`, zone, '/start');
        } catch {
          continue; // a time the clocks skip that day
        }
        const s = start.getTime();
        const e = s + type.duration_min * 60_000;
        if (s < from.getTime() || s >= to.getTime() || s < earliest || s > latest) continue;
        const hold = { start: s - type.buffer_before_min * 60_000, end: e + type.buffer_after_min * 60_000 };
        if (busy.some((b) => b.start < hold.end && b.end > hold.start)) continue;
        const local = isoIn(start, askerZone);
        out.push({ start: start.toISOString(), end: new Date(e).toISOString(), local, date: local.slice(0, 10), time: local.slice(11, 16) });
      }
    }
  }
  return out.sort((a, b) => (a.start < b.start ? -1 : 1));
}

/** The instants of the asker's dates `from`–`to` (inclusive) in `zone`, refused past {@link MAX_RANGE_DAYS}. */
export function askedRange(from: string, to: string, zone: string): { from: Date; to: Date } {
  if (to < from) throw new CuadraError('invalid_input', 'The range ends before it starts.', { field: '/to' });
  if (calendarDays(from, to).length > MAX_RANGE_DAYS) throw new CuadraError('invalid_input', `Availability is answered for at most ${MAX_RANGE_DAYS} days at once.`, { field: '/to' });
  return { from: dayStart(from, zone), to: dayStart(addDays(to, 1), zone) };
}
