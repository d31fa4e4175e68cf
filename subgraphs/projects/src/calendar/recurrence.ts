import { addDays, CuadraError } from '@cuadra/shared';
import ICAL from 'ical.js';
import { dayStart, localToInstant } from './time.ts';

/**
 * RFC 5545 recurrence (RRULE with EXDATE and overridden instances, RECURRENCE-ID) expanded with
 * ical.js on the event's wall clock, each occurrence turned into an instant in the event's zone
 * afterwards: a weekly 10:00 Madrid meeting is 08:00Z in summer and 09:00Z in winter.
 */

/** Frequencies a calendar event may repeat at (seconds, minutes and hours would flood a calendar). */
export const FREQUENCIES = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'] as const;

/** Occurrences walked at most per expansion: about 27 years of a daily series. */
export const MAX_WALK = 10_000;

/** One instance of a series changed on its own (RFC 5545 RECURRENCE-ID). */
export interface OccurrenceOverride {
  /** The original start of the instance on the series' wall clock: `YYYY-MM-DDTHH:mm`, or `YYYY-MM-DD` all day. */
  recurrence_id: string;
  start_local: string;
  end_local: string;
  title: string | null;
  status: string | null;
}

/** What expansion needs of an event. */
export interface SeriesShape {
  all_day: boolean;
  time_zone: string;
  /** Wall-clock start and end in the zone (`YYYY-MM-DDTHH:mm`), or dates (end inclusive) all day. */
  start_local: string;
  end_local: string;
  rrule: string | null;
  /** Recurrence ids of removed instances (RFC 5545 EXDATE). */
  exdates: string[];
  overrides: OccurrenceOverride[];
}

/** One occurrence of an event in a window. */
export interface Occurrence {
  /** Null for a single event. */
  recurrence_id: string | null;
  start_local: string;
  end_local: string;
  start: Date;
  end: Date;
  override: OccurrenceOverride | null;
}

/** The instants a wall-clock range covers in `zone`; an all-day range ends when the day after its last date begins. */
export function rangeInstants(allDay: boolean, startLocal: string, endLocal: string, zone: string): { start: Date; end: Date } {
  if (allDay) return { start: dayStart(startLocal, zone), end: dayStart(addDays(endLocal, 1), zone) };
  return { start: localToInstant(startLocal, zone), end: localToInstant(endLocal, zone) };
}

/** Parses an RRULE value (without `RRULE:`), refusing at `field` what cannot be a calendar's repetition. */
export function parseRrule(rule: string, field: string): ICAL.Recur {
  const text = rule.replace(/^RRULE:/i, '').trim();
  let recur: ICAL.Recur;
  try {
    if (!/^[A-Z0-9=;,:+-]+$/i.test(text)) throw new Error('characters');
    recur = ICAL.Recur.fromString(text);
  } catch {
    throw new CuadraError('invalid_input', `"${rule}" is not an RFC 5545 RRULE (e.g. FREQ=WEEKLY;BYDAY=MO).`, { field });
  }
  if (!(FREQUENCIES as readonly string[]).includes(recur.freq)) {
    throw new CuadraError('invalid_input', `An event repeats ${FREQUENCIES.join(', ')}; "${recur.freq ?? 'none'}" is not one of them.`, { field });
  }
  return recur;
}

/** The wall-clock difference of a range: minutes for a timed one, days for an all-day one. */
function spanOf(shape: SeriesShape): number {
  if (shape.all_day) return Math.round((Date.parse(`${shape.end_local}T00:00Z`) - Date.parse(`${shape.start_local}T00:00Z`)) / 86_400_000);
  return Math.round((Date.parse(`${shape.end_local}:00Z`) - Date.parse(`${shape.start_local}:00Z`)) / 60_000);
}

/** The wall-clock end of an occurrence starting at `startLocal`, keeping the series' span. */
function endFor(shape: SeriesShape, startLocal: string): string {
  const span = spanOf(shape);
  if (shape.all_day) return addDays(startLocal, span);
  return new Date(Date.parse(`${startLocal}:00Z`) + span * 60_000).toISOString().slice(0, 16);
}

function icalStart(shape: SeriesShape): ICAL.Time {
  if (shape.all_day) {
    const [y, m, d] = shape.start_local.split('-').map(Number);
    return ICAL.Time.fromData({ year: y, month: m, day: d, isDate: true });
  }
  const [date, time] = shape.start_local.split('T');
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm] = time.split(':').map(Number);
  return ICAL.Time.fromData({ year: y, month: m, day: d, hour: hh, minute: mm, second: 0 });
}

function localId(t: ICAL.Time, allDay: boolean): string {
  return allDay ? t.toString().slice(0, 10) : t.toString().slice(0, 16);
}

function occurrence(shape: SeriesShape, id: string | null, startLocal: string, endLocal: string, override: OccurrenceOverride | null): Occurrence {
  const { start, end } = rangeInstants(shape.all_day, startLocal, endLocal, shape.time_zone);
  return { recurrence_id: id, start_local: startLocal, end_local: endLocal, start, end, override };
}

/**
 * The occurrences of an event that overlap [from, to), in order of start. A single event is its
 * one range; a series is walked from its first instance (at most {@link MAX_WALK}), removed
 * instances skipped and overridden ones taken as changed (an override moved into the window from
 * outside it counts too).
 */
export function occurrencesBetween(shape: SeriesShape, from: Date, to: Date): Occurrence[] {
  const overlaps = (o: Occurrence) => o.start < to && o.end > from;
  if (!shape.rrule) {
    const one = occurrence(shape, null, shape.start_local, shape.end_local, null);
    return overlaps(one) ? [one] : [];
  }
  const out: Occurrence[] = [];
  const removed = new Set(shape.exdates);
  const changed = new Map(shape.overrides.map((o) => [o.recurrence_id, o]));
  const it = ICAL.Recur.fromString(shape.rrule).iterator(icalStart(shape));
  for (let i = 0, next = it.next(); next && i < MAX_WALK; i++, next = it.next()) {
    const id = localId(next, shape.all_day);
    const plain = occurrence(shape, id, id, endFor(shape, id), null);
    if (plain.start >= to) break;
    if (removed.has(id) || changed.has(id)) continue;
    if (overlaps(plain)) out.push(plain);
  }
  for (const o of changed.values()) {
    if (removed.has(o.recurrence_id)) continue;
    const moved = occurrence(shape, o.recurrence_id, o.start_local, o.end_local, o);
    if (overlaps(moved)) out.push(moved);
  }
  return out.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/**
 * Whether `id` names an instance the series generates (an exception must name a real occurrence,
 * as RFC 5545's RECURRENCE-ID does).
 */
export function isInstanceOf(shape: SeriesShape, id: string): boolean {
  if (!shape.rrule) return false;
  const it = ICAL.Recur.fromString(shape.rrule).iterator(icalStart(shape));
  for (let i = 0, next = it.next(); next && i < MAX_WALK; i++, next = it.next()) {
    const have = localId(next, shape.all_day);
    if (have === id) return true;
    if (have > id) return false;
  }
  return false;
}

/** The end of a series' last occurrence, or null when it repeats without end (no COUNT or UNTIL, or beyond the walk). */
export function seriesEnd(shape: SeriesShape): Date | null {
  if (!shape.rrule) return rangeInstants(shape.all_day, shape.start_local, shape.end_local, shape.time_zone).end;
  const recur = ICAL.Recur.fromString(shape.rrule);
  if (!recur.count && !recur.until) return null;
  const it = recur.iterator(icalStart(shape));
  let last: string | null = null;
  let i = 0;
  for (let next = it.next(); next; next = it.next()) {
    if (++i > MAX_WALK) return null;
    last = localId(next, shape.all_day);
  }
  let end = last ? occurrence(shape, last, last, endFor(shape, last), null).end : null;
  for (const o of shape.overrides) {
    const moved = occurrence(shape, o.recurrence_id, o.start_local, o.end_local, o).end;
    if (!end || moved > end) end = moved;
  }
  return end;
}
