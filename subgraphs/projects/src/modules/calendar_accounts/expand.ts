import { addDays } from '@cuadra/shared';
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { occurrencesBetween, type OccurrenceOverride, type SeriesShape } from '../../calendar/recurrence.ts';
import { instantToLocal, WORKSPACE_ZONE } from '../../calendar/time.ts';
import type { SyncedSpan } from './model.ts';

/**
 * A calendar object read from a CalDAV server (one `.ics` resource: a VEVENT, or a series with its
 * overridden instances) turned into the calendar's {@link SeriesShape} and expanded with the same
 * code that expands Cuadra's own events: the series is laid out on its zone's wall clock, so a
 * weekly 09:00 Madrid meeting stays at 09:00 across Madrid's DST change.
 *
 * Times are read by their TZID when it is an IANA zone (the server's VTIMEZONE is not trusted to
 * redefine a zone the zone database knows); a TZID the zone database does not know (Outlook's
 * "Romance Standard Time") is converted with the object's own VTIMEZONE and the series laid out in
 * UTC; a floating time is read in the workspace's zone.
 */

/** What one synced object is. */
export interface ParsedObject {
  uid: string;
  title: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  all_day: boolean;
  start: Date;
  end: Date;
  rrule: string | null;
  transparent: boolean;
  shape: SeriesShape;
}

function isIanaZone(tzid: string): boolean {
  return tzid === 'UTC' || DateTime.now().setZone(tzid).isValid;
}

/** The instant of a DATE-TIME value in `zones` (VTIMEZONEs of the object by TZID). */
function instantOf(t: ICAL.Time, tzid: string | null, zones: Map<string, ICAL.Timezone>): Date {
  if (t.zone === ICAL.Timezone.utcTimezone || tzid === 'UTC' || tzid === 'Z') return t.toJSDate();
  if (tzid && isIanaZone(tzid)) return localClock(t, tzid);
  const vtz = tzid ? zones.get(tzid) : undefined;
  if (vtz) {
    const c = t.clone();
    c.zone = vtz;
    return new Date(c.toUnixTime() * 1000);
  }
  return localClock(t, WORKSPACE_ZONE);
}

function localClock(t: ICAL.Time, zone: string): Date {
  return DateTime.fromObject({ year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second }, { zone }).toJSDate();
}

function dateText(t: ICAL.Time): string {
  return `${String(t.year).padStart(4, '0')}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;
}

function tzidOf(prop: ICAL.Property | null): string | null {
  const p = prop?.getParameter('tzid');
  return typeof p === 'string' ? p : null;
}

function statusOf(comp: ICAL.Component): ParsedObject['status'] {
  const s = String(comp.getFirstPropertyValue('status') ?? '').toUpperCase();
  return s === 'CANCELLED' ? 'cancelled' : s === 'TENTATIVE' ? 'tentative' : 'confirmed';
}

/** The wall-clock text of an instant (or a date) in the series' zone. */
function localIn(t: ICAL.Time, tzid: string | null, zones: Map<string, ICAL.Timezone>, zone: string): string {
  if (t.isDate) return dateText(t);
  return instantToLocal(instantOf(t, tzid, zones), zone);
}

/** The end of a component: DTEND, else DTSTART + DURATION, else its start (a date: one day). */
function endOf(comp: ICAL.Component, start: ICAL.Time): { time: ICAL.Time; tzid: string | null } {
  const dtend = comp.getFirstProperty('dtend');
  if (dtend) return { time: dtend.getFirstValue() as ICAL.Time, tzid: tzidOf(dtend) };
  const duration = comp.getFirstPropertyValue('duration') as ICAL.Duration | null;
  const end = start.clone();
  if (duration) end.addDuration(duration);
  else if (start.isDate) end.adjust(1, 0, 0, 0);
  return { time: end, tzid: tzidOf(comp.getFirstProperty('dtstart')) };
}

/**
 * Parses an object's iCalendar text; null when it holds no event (a to-do, a journal) or does not
 * parse (the sync records it as skipped rather than failing the calendar).
 */
export function parseObject(ics: string): ParsedObject | null {
  let cal: ICAL.Component;
  try {
    cal = new ICAL.Component(ICAL.parse(ics));
  } catch {
    return null;
  }
  const zones = new Map<string, ICAL.Timezone>();
  for (const vtz of cal.getAllSubcomponents('vtimezone')) {
    const tzid = String(vtz.getFirstPropertyValue('tzid') ?? '');
    if (tzid) zones.set(tzid, new ICAL.Timezone({ component: vtz, tzid }));
  }
  const vevents = cal.getAllSubcomponents('vevent');
  const master = vevents.find((v) => !v.hasProperty('recurrence-id')) ?? vevents[0];
  if (!master) return null;
  const dtstart = master.getFirstProperty('dtstart');
  if (!dtstart) return null;
  const start = dtstart.getFirstValue() as ICAL.Time;
  const startTz = tzidOf(dtstart);
  const allDay = start.isDate;
  // The zone the series is laid out in.
  const zone = allDay ? WORKSPACE_ZONE
    : start.zone === ICAL.Timezone.utcTimezone ? 'UTC'
    : startTz && isIanaZone(startTz) ? startTz
    : startTz && zones.has(startTz) ? 'UTC' : WORKSPACE_ZONE;
  const end = endOf(master, start);
  const startLocal = localIn(start, startTz, zones, zone);
  // An all-day range's end is inclusive in a SeriesShape; DTEND of a date is exclusive.
  let endLocal = allDay ? addDays(dateText(end.time), -1) : localIn(end.time, end.tzid, zones, zone);
  if (allDay && endLocal < startLocal) endLocal = startLocal;
  const rule = master.getFirstPropertyValue('rrule') as ICAL.Recur | null;
  const exdates: string[] = [];
  for (const p of master.getAllProperties('exdate')) {
    for (const v of p.getValues() as ICAL.Time[]) exdates.push(localIn(v, tzidOf(p), zones, zone));
  }
  const overrides: OccurrenceOverride[] = [];
  for (const ex of vevents) {
    if (ex === master || !ex.hasProperty('recurrence-id')) continue;
    const rid = ex.getFirstProperty('recurrence-id')!;
    const exStart = ex.getFirstProperty('dtstart');
    const s = (exStart?.getFirstValue() as ICAL.Time | undefined) ?? (rid.getFirstValue() as ICAL.Time);
    const e = endOf(ex, s);
    const status = statusOf(ex);
    overrides.push({
      recurrence_id: localIn(rid.getFirstValue() as ICAL.Time, tzidOf(rid), zones, zone),
      start_local: localIn(s, tzidOf(exStart ?? rid), zones, zone),
      end_local: allDay ? addDays(dateText(e.time), -1) : localIn(e.time, e.tzid, zones, zone),
      title: ex.hasProperty('summary') ? String(ex.getFirstPropertyValue('summary')) : null,
      status: status === 'confirmed' ? null : status,
    });
  }
  const shape: SeriesShape = { all_day: allDay, time_zone: zone, start_local: startLocal, end_local: endLocal, rrule: rule ? rule.toString() : null, exdates, overrides };
  const first = occurrencesBetween({ ...shape, rrule: null }, new Date(-8.64e15), new Date(8.64e15))[0];
  return {
    uid: String(master.getFirstPropertyValue('uid') ?? ''),
    title: String(master.getFirstPropertyValue('summary') ?? '').slice(0, 500),
    status: statusOf(master),
    all_day: allDay,
    start: first?.start ?? instantOf(start, startTz, zones),
    end: first?.end ?? instantOf(end.time, end.tzid, zones),
    rrule: shape.rrule,
    transparent: String(master.getFirstPropertyValue('transp') ?? '').toUpperCase() === 'TRANSPARENT',
    shape,
  };
}

/** Occurrences expanded at most per object and window (a minutely series is not a calendar). */
export const MAX_SPANS = 1_000;

/**
 * The occurrences of a parsed object within [from, to): each busy unless the event is transparent
 * or that occurrence (or the whole event) is cancelled.
 */
export function spansOf(o: ParsedObject, from: Date, to: Date): SyncedSpan[] {
  return occurrencesBetween(o.shape, from, to).slice(0, MAX_SPANS).map((occ) => ({
    start: occ.start, end: occ.end,
    busy: !o.transparent && o.status !== 'cancelled' && occ.override?.status !== 'cancelled',
  }));
}
