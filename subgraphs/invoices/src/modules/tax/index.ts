import { defineModule } from '@cuadra/shared';
import { taxLane } from './agenda.ts';
import { taxProfiles } from './model.ts';
import { configure } from './tools/configure.ts';

/** The workspace's DIAN obligations: its tax profile and the agenda's `tax` lane (the national tax calendar as data). */
export const taxModule = defineModule({
  name: 'tax',
  tools: [configure],
  models: [taxProfiles],
  reads: { agenda: { tax: taxLane } },
});
