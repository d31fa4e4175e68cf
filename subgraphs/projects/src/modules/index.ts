import { fromModules } from '@cuadra/shared';
import { bookingTypesModule } from './booking_types/index.ts';
import { bookingsModule } from './bookings/index.ts';
import { calendarAccountsModule } from './calendar_accounts/index.ts';
import { calendarEventsModule } from './calendar_events/index.ts';
import { projectsModule } from './projects/index.ts';
import { tasksModule } from './tasks/index.ts';

/** The projects (work, calendar) subgraph: its built modules, then those DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('projects', [projectsModule, tasksModule, calendarEventsModule, bookingTypesModule, bookingsModule, calendarAccountsModule]);
