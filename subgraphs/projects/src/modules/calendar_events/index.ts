import { defineModule } from '@cuadra/shared';
import { calendarEvents } from './model.ts';
import { calendarReminders, sendDueReminders } from './reminders.ts';
import { calendarEventsSource, eventsLaneReader } from './sources.ts';
import { eventDays } from './store.ts';
import { cancel } from './tools/cancel.ts';
import { complete } from './tools/complete.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';

/** The workspace's calendar: events with RFC 5545 recurrence in IANA zones; the agenda's `events` lane. */
export const calendarEventsModule = defineModule({
  name: 'calendar_events',
  tools: [create, update, cancel, complete, list, get],
  models: [calendarEvents, eventDays, calendarReminders],
  listed: [{ model: calendarEvents }],
  reads: { sources: { calendar_events: calendarEventsSource }, agenda: { events: eventsLaneReader } },
  background: [{ name: 'calendar reminders', everyMs: 30_000, run: async (db, now, log) => { await sendDueReminders(db, now, log); } }],
});
