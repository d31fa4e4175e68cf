import { defineModule } from '@cuadra/shared';
import { activitiesLane } from './agenda.ts';
import { bookingPull } from './bookings.ts';
import { activities } from './model.ts';
import { complete } from './tools/complete.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';

/** Calls, meetings, tasks, notes and e-mails on deals and parties; the open ones are crm's part of the agenda's events lane. */
export const activitiesModule = defineModule({
  name: 'activities',
  tools: [create, complete, list],
  models: [activities],
  listed: [{ model: activities }],
  reads: { agenda: { events: activitiesLane } },
  // Bookings become activities on their bookers' parties (bookings.ts).
  background: [bookingPull.job],
  readGuards: { 'Query.bookingActivity': 'activities' },
});
