import { addDays, CuadraError, type AgendaEntry } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { addToDays, byIds, dayIndex, daysTouched, idsOfDays, pullFromDays } from '../../calendar/day-index.ts';
import { occurrencesBetween, type Occurrence } from '../../calendar/recurrence.ts';
import { dateIn, dayStart, WORKSPACE_ZONE } from '../../calendar/time.ts';
import { calendarEvents, OBLIGATION_KINDS, type CalendarEventDoc } from './model.ts';
import { scheduled } from './reminders.ts';

/** Calendar events by the workspace's days; repeating series under the key `series`. */
export const eventDays = dayIndex('CalendarEventDay', 'calendar_event_days');

/** Repeating series a workspace may hold (each is expanded on every window read). */
export const MAX_SERIES = 500;

/** The index keys of an event: its days, or `series`. */
export function eventKeys(e: Pick<CalendarEventDoc, 'rrule' | 'start' | 'end'>): string[] {
  return e.rrule ? ['series'] : daysTouched(e.start, e.end);
}

/** Files an event under its keys before it is written (a crash leaves at most an extra id). */
export async function fileEvent(db: Connection, e: CalendarEventDoc): Promise<void> {
  if (e.rrule) {
    const series = await eventDays(db).findOne({ _id: `${e.workspace}|series` }, { ids: 1 }).lean();
    if (series && !series.ids.includes(e._id) && series.ids.length >= MAX_SERIES) {
      throw new CuadraError('conflict', `A workspace keeps at most ${MAX_SERIES} repeating events; end or cancel one first.`);
    }
  }
  await addToDays(db, eventDays, e.workspace, eventKeys(e), e._id);
}

/** Pulls an event from the keys it no longer has, after it was written. */
export async function refileEvent(db: Connection, before: CalendarEventDoc, after: CalendarEventDoc | null): Promise<void> {
  const keep = new Set(after ? eventKeys(after) : []);
  await pullFromDays(db, eventDays, before.workspace, eventKeys(before).filter((k) => !keep.has(k)), before._id);
}

/** One occurrence of an event, with the event. */
export interface EventOccurrence extends Occurrence { event: CalendarEventDoc; status: CalendarEventDoc['status']; title: string }

/**
 * The occurrences of the workspace's events overlapping [from, to): single events from the days'
 * index, series from the series key, expanded. Cancelled ones are left out unless asked for.
 */
export async function occurrencesIn(db: Connection, workspace: string, from: Date, to: Date, opts: { cancelled?: boolean } = {}): Promise<EventOccurrence[]> {
  const ids = new Set(await idsOfDays(db, eventDays, workspace, dateIn(from, WORKSPACE_ZONE), dateIn(new Date(to.getTime() - 1), WORKSPACE_ZONE)));
  const series = await eventDays(db).findOne({ _id: `${workspace}|series` }, { ids: 1 }).lean();
  for (const id of series?.ids ?? []) ids.add(id);
  const events = await byIds<CalendarEventDoc>(calendarEvents(db), workspace, [...ids]);
  const out: EventOccurrence[] = [];
  for (const event of events) {
    if (event.status === 'cancelled' && !opts.cancelled) continue;
    if (event.until && event.until <= from) continue;
    for (const o of occurrencesBetween(event, from, to)) {
      const status = (o.override?.status as CalendarEventDoc['status'] | null) ?? event.status;
      if (status === 'cancelled' && !opts.cancelled) continue;
      out.push({ ...o, event, status, title: o.override?.title ?? event.title });
    }
  }
  return out.sort((a, b) => a.start.getTime() - b.start.getTime() || a.event._id.localeCompare(b.event._id));
}

/** An agenda entry of an occurrence (specification §2.6): dated in the workspace's calendar. */
export function eventEntry(o: EventOccurrence, overdue: boolean): AgendaEntry {
  const e = o.event;
  return {
    date: e.all_day ? o.start_local : dateIn(o.start, WORKSPACE_ZONE),
    kind: e.kind,
    source: 'events',
    title: o.title,
    event_id: e._id,
    recurrence_id: o.recurrence_id,
    status: o.status,
    all_day: e.all_day,
    starts_at: o.start.toISOString(),
    ends_at: o.end.toISOString(),
    time_zone: e.time_zone,
    start_local: o.start_local,
    ...(e.location ? { location: e.location } : {}),
    ...(e.booking_id ? { booking_id: e.booking_id } : {}),
    overdue,
  };
}

/**
 * The `events` lane: the window's occurrences (cancelled left out) and, with `overdue`, the
 * obligations (legal, tax, compliance, deadline) of the 90 days before it that are neither done
 * nor cancelled — what came due and was never closed (specification §2.6).
 */
export async function eventsLane(db: Connection, workspace: string, window: { from: string; to: string; limit: number; overdue: boolean }): Promise<AgendaEntry[]> {
  const from = dayStart(window.from, WORKSPACE_ZONE);
  const to = dayStart(addDays(window.to, 1), WORKSPACE_ZONE);
  const entries: AgendaEntry[] = [];
  if (window.overdue) {
    const before = await occurrencesIn(db, workspace, dayStart(addDays(window.from, -90), WORKSPACE_ZONE), from);
    for (const o of before) if (OBLIGATION_KINDS.includes(o.event.kind) && o.status !== 'done' && o.end <= from) entries.push(eventEntry(o, true));
  }
  for (const o of await occurrencesIn(db, workspace, from, to)) entries.push(eventEntry(o, false));
  return entries.slice(0, window.limit);
}

/**
 * Changes an event by one conditional write on its `rev` (a change made meanwhile is read again
 * and the change recomputed, three times at most, then `conflict`), filing it under its new keys
 * before the write and pulling it from the old ones after. `change` answers the new document, or
 * throws a refusal; nothing is written then.
 */
export async function changeEvent(db: Connection, workspace: string, id: string, now: Date, change: (e: CalendarEventDoc) => CalendarEventDoc | Promise<CalendarEventDoc>): Promise<CalendarEventDoc> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = await calendarEvents(db).findOne({ _id: id, workspace }).lean<CalendarEventDoc>();
    if (!before) throw new CuadraError('not_found', `No calendar event ${id} exists in this workspace.`);
    const changed: CalendarEventDoc = { ...(await change(structuredClone(before))), _id: before._id, workspace, rev: before.rev + 1, updated_at: now, created_at: before.created_at };
    // Reminders due since the last sweep that were not handled yet still go out if their occurrence is ahead.
    const after = scheduled(changed, before.reminder_cursor ?? before.created_at);
    await fileEvent(db, after);
    const { _id, workspace: _w, created_at: _c, ...set } = after;
    const written = await calendarEvents(db).updateOne({ _id: id, workspace, rev: before.rev }, { $set: set });
    if (written.modifiedCount === 1 || written.matchedCount === 1) {
      await refileEvent(db, before, after);
      return after;
    }
  }
  throw new CuadraError('conflict', `The calendar event ${id} is being changed by someone else; read it again and retry.`);
}

/** Refuses a change to an event that is over (done or cancelled), or that a booking owns. */
export function assertOpen(e: CalendarEventDoc, allowBooking = false): void {
  if (e.status === 'cancelled' || e.status === 'done') throw new CuadraError('conflict', `The calendar event ${e._id} is ${e.status}.`);
  if (e.source === 'booking' && !allowBooking) throw new CuadraError('conflict', `The calendar event ${e._id} belongs to booking ${e.booking_id}: reschedule or cancel the booking instead.`);
}
