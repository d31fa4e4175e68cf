import { defineGetTool } from '@cuadra/shared';
import { calendarEvents, EVENT_VIEW_SCHEMA, eventView, type CalendarEventDoc } from '../model.ts';

/** One calendar event by id. */
export const get = defineGetTool<CalendarEventDoc>({
  name: 'calendar_events.get',
  description: 'One calendar event by id, as written (a repeating event with its rrule, exceptions and overridden instances).',
  model: calendarEvents, view: eventView, viewSchema: EVENT_VIEW_SCHEMA, key: 'event', what: 'calendar event',
});
