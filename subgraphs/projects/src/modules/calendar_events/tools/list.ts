import { defineListTool, searchTerm } from '@cuadra/shared';
import { calendarEvents, EVENT_KINDS, EVENT_STATUSES, EVENT_VIEW_SCHEMA, eventMatches, eventView, type CalendarEventDoc } from '../model.ts';

/** Lists the workspace's calendar events as stored (a series once), newest first. */
export const list = defineListTool({
  name: 'calendar_events.list',
  description: 'List calendar events as written (a repeating event once, with its rrule), newest first; filter by kind, status or a case-insensitive search of title, description, location and attendees. The agenda lists occurrences by date.',
  model: calendarEvents,
  view: (e: CalendarEventDoc) => eventView(e),
  viewSchema: EVENT_VIEW_SCHEMA,
  filters: { kind: { enum: [...EVENT_KINDS] }, status: { enum: [...EVENT_STATUSES] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ kind, status, search }) => {
    const text = searchTerm(search);
    if (!kind && !status && !text) return undefined;
    return (e: CalendarEventDoc) => (!kind || e.kind === kind) && (!status || e.status === status) && (!text || eventMatches(e, text));
  },
});
