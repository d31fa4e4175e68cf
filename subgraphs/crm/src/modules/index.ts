import { fromModules } from '@cuadra/shared';
import { partiesModule } from './parties/index.ts';

/** The crm subgraph: its built modules, then the modules DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('crm', [partiesModule], ['deals', 'pipelines', 'crm_fields', 'tags', 'marketing', 'email', 'bookings', 'sites']);
