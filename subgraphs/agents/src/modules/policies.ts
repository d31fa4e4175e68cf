import { defineModule } from '@cuadra/shared';
import { create } from '../tools/policies/create.ts';
import { remove } from '../tools/policies/delete.ts';
import { list } from '../tools/policies/list.ts';
import { update } from '../tools/policies/update.ts';

/** Autonomy policies (stored in the governance database every service shares). */
export const policiesModule = defineModule({
  name: 'policies',
  tools: [create, update, remove, list],
  reads: { sources: { policies: { field: 'agentsRecords', module: 'policies' } } },
});
