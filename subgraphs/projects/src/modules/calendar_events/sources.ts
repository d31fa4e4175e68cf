import { CuadraError, defineSource, type LaneReader, type SourceReader } from '@cuadra/shared';
import { occurrencesBetween } from '../../calendar/recurrence.ts';
import { calendarEvents, EVENT_KINDS, EVENT_STATUSES, eventMatches, type CalendarEventDoc } from './model.ts';
import { dateIn, WORKSPACE_ZONE } from '../../calendar/time.ts';
import { eventsLane } from './store.ts';

/**
 * The first occurrence of an event that has not ended at `now` (cancelled instances skipped), or
 * null; `date` is its day as the agenda dates it (an all-day one's own date, else the workspace's).
 */
function nextOccurrence(e: CalendarEventDoc, now: Date): { start: string; end: string; date: string; recurrence_id: string | null } | null {
  for (let span = 31; span <= 31 * 16; span *= 4) {
    const found = occurrencesBetween(e, now, new Date(now.getTime() + span * 86_400_000)).find((o) => (o.override?.status ?? e.status) !== 'cancelled');
    if (found) return { start: found.start.toISOString(), end: found.end.toISOString(), date: e.all_day ? found.start_local : dateIn(found.start, WORKSPACE_ZONE), recurrence_id: found.recurrence_id };
    if (e.until && e.until < new Date(now.getTime() + span * 86_400_000)) break;
  }
  return null;
}

function eventRow(e: CalendarEventDoc, now = new Date()) {
  return {
    id: e._id, title: e.title, kind: e.kind, status: e.status, all_day: e.all_day, time_zone: e.time_zone,
    start: e.start.toISOString(), end: e.end.toISOString(), start_local: e.start_local, end_local: e.end_local,
    rrule: e.rrule, location: e.location, source: e.source, booking_id: e.booking_id ?? null,
    attendees: e.attendees.map((a) => a.email),
    next: e.status === 'cancelled' ? null : nextOccurrence(e, now),
  };
}

const page = defineSource<CalendarEventDoc>({
  model: calendarEvents,
  search: eventMatches,
  kinds: Object.fromEntries(EVENT_KINDS.map((k) => [k, { kind: k }])),
  statuses: EVENT_STATUSES,
  row: (e) => eventRow(e),
});

/**
 * records.list `calendar_events`: the events as written, newest first (CONTRACT §9), with kind and
 * status in the specification's vocabulary (§2.5) and each row's next occurrence; `ref` an event
 * id answers that one event (what the canvas `event` block pins), `not_found` when the workspace
 * has none of that id.
 */
export const calendarEventsSource: SourceReader = async (q, ctx) => {
  if (q.ref === undefined) return page(q, ctx);
  const e = await calendarEvents(ctx.db).findOne({ _id: q.ref, workspace: ctx.workspace }).lean<CalendarEventDoc>();
  if (!e) throw new CuadraError('not_found', `No calendar event ${q.ref} exists in this workspace.`);
  return { rows: [eventRow(e, ctx.now)], total: 1 };
};

/** The agenda's `events` lane (specification §2.6): this workspace's calendar, by date. */
export const eventsLaneReader: LaneReader = (window, ctx) => eventsLane(ctx.db, ctx.workspace, window);
