import { containsText, defineModule, defineSource } from '@cuadra/shared';
import { addBusyReader } from '../bookings/availability.ts';
import { ACCOUNT_STATUSES, calendarAccounts, calendarProposals, calendarPublications, connectedCalendars, connectedEvents, type CalendarAccountDoc, type ConnectedCalendarDoc, type ConnectedEventDoc } from './model.ts';
import { connectedBusy, syncDueAccounts } from './sync.ts';
import { choose } from './tools/choose.ts';
import { connect } from './tools/connect.ts';
import { publish } from './tools/publish.ts';
import { remove } from './tools/remove.ts';
import { resolve } from './tools/resolve.ts';
import { sync } from './tools/sync.ts';

// Bookings' availability subtracts the busy times of the calendars chosen to count.
addBusyReader(connectedBusy);

/** Calendars connected over CalDAV: accounts, their calendars, their events synced (and Cuadra's written back, guarded by If-Match). */
export const calendarAccountsModule = defineModule({
  name: 'calendar_accounts',
  tools: [connect, sync, choose, publish, resolve, remove],
  models: [calendarAccounts, connectedCalendars, connectedEvents, calendarPublications, calendarProposals],
  listed: [{ model: calendarAccounts }, { model: connectedCalendars }, { model: connectedEvents }],
  background: [{ name: 'calendar sync', everyMs: 60_000, run: async (db, now, log) => { await syncDueAccounts(db, now, log); } }],
  reads: {
    sources: {
      calendar_accounts: defineSource<CalendarAccountDoc>({
        model: calendarAccounts, statuses: ACCOUNT_STATUSES,
        search: (a, n) => containsText(a.name_lc, n) || containsText(a.username, n) || containsText(a.url, n),
        row: (a) => ({ id: a._id, name: a.name, url: a.url, username: a.username, status: a.status, last_error: a.last_error, last_synced_at: a.last_synced_at?.toISOString() ?? null }),
      }),
      connected_calendars: defineSource<ConnectedCalendarDoc>({
        model: connectedCalendars,
        search: (c, n) => containsText(c.name_lc, n),
        row: (c) => ({ id: c._id, account_id: c.account_id, name: c.name, counts_for_availability: c.counts_for_availability, status: c.gone ? 'gone' : 'active', last_synced_at: c.last_synced_at?.toISOString() ?? null, last_sync_method: c.last_sync_method }),
      }),
      connected_calendar_events: defineSource<ConnectedEventDoc>({
        model: connectedEvents, statuses: ['confirmed', 'tentative', 'cancelled'],
        search: (e, n) => containsText(e.title_lc, n),
        row: (e) => ({
          id: e._id, calendar_id: e.calendar_id, uid: e.uid, title: e.title, status: e.status, all_day: e.all_day, start: e.start.toISOString(), end: e.end.toISOString(),
          rrule: e.rrule, busy: !e.transparent && e.status !== 'cancelled', occurrences: e.spans.map((s) => ({ start: s.start.toISOString(), end: s.end.toISOString(), busy: s.busy })).slice(0, 50),
        }),
      }),
    },
  },
});
