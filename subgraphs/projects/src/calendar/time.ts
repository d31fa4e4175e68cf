import { CuadraError } from '@cuadra/shared';
import { DateTime } from 'luxon';

/**
 * Wall-clock time in IANA zones (luxon over the runtime's ICU data). Events are stored as UTC
 * instants plus the zone they were written in; recurrence and slots are laid out on the zone's
 * wall clock and only then turned into instants, so a 10:00 meeting stays at 10:00 across a
 * daylight-saving change of its zone.
 */

/** The zone the agenda's dates are in: a Colombian workspace's calendar (CONTRACT §10; shared periods.ts is UTC−5 too). */
export const WORKSPACE_ZONE = 'America/Bogota';

/** A local wall-clock time as tools take it: `YYYY-MM-DDTHH:mm` (no offset, no seconds). */
export const LOCAL_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$';

/** JSON Schema of an IANA zone name (checked against the zone database by {@link checkZone}). */
export const ZONE_SCHEMA = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z_]+(/[A-Za-z0-9_+-]+){0,2}$|^UTC$' } as const;

/** Refuses a zone the zone database does not know, at `field`. */
export function checkZone(zone: string, field: string): void {
  if (!DateTime.now().setZone(zone).isValid) throw new CuadraError('invalid_input', `"${zone}" is not an IANA time zone (e.g. America/Bogota, Europe/Madrid).`, { field });
}

/**
 * The instant a wall-clock time of `zone` names. A time that does not exist there (skipped by a
 * daylight-saving change) is refused at `field` when given; when computed (a recurrence), luxon
 * moves it forward by the gap, as RFC 5545 §3.3.5 says for such times.
 */
export function localToInstant(local: string, zone: string, field?: string): Date {
  const dt = DateTime.fromISO(local, { zone });
  if (!dt.isValid) {
    if (field) throw new CuadraError('invalid_input', `${local} is not a valid date and time.`, { field });
    throw new Error(`invalid local time ${local}`);
  }
  if (field && dt.toFormat("yyyy-LL-dd'T'HH:mm") !== local) {
    throw new CuadraError('invalid_input', `${local} does not exist in ${zone} (the clocks skip it).`, { field });
  }
  return dt.toJSDate();
}

/** The wall-clock time (`YYYY-MM-DDTHH:mm`) of an instant in `zone`. */
export function instantToLocal(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat("yyyy-LL-dd'T'HH:mm");
}

/** The calendar date (YYYY-MM-DD) of an instant in `zone`. */
export function dateIn(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toISODate()!;
}

/** The UTC offset of an instant in `zone`, as `-05:00`. */
export function offsetIn(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat('ZZ');
}

/** An instant written with the offset of `zone`: `2026-07-06T16:00:00+02:00`. */
export function isoIn(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toISO({ suppressMilliseconds: true })!;
}

/** The instant a calendar date begins in `zone`. */
export function dayStart(date: string, zone: string): Date {
  return DateTime.fromISO(date, { zone }).startOf('day').toJSDate();
}

/** The ISO weekday (1 Monday … 7 Sunday) of a calendar date. */
export function weekday(date: string): number {
  return DateTime.fromISO(date, { zone: 'UTC' }).weekday;
}

/** An instant as people read it in a message: `2026-07-06 16:00 (Europe/Madrid)`. */
export function wallClockText(at: Date, zone: string): string {
  return `${instantToLocal(at, zone).replace('T', ' ')} (${zone})`;
}
