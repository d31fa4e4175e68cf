import { fromModules } from '@cuadra/shared';
import { activitiesModule } from './activities/index.ts';
import { crmFieldsModule } from './crm_fields/index.ts';
import { dealsModule } from './deals/index.ts';
import { partiesModule } from './parties/index.ts';
import { pipelinesModule } from './pipelines/index.ts';

/** The crm subgraph: its built modules, then the modules DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('crm', [partiesModule, pipelinesModule, dealsModule, crmFieldsModule, activitiesModule], ['tags', 'bookings']);
