import { defineModule } from '@cuadra/shared';
import { policiesSource } from './sources.ts';
import { create } from './tools/create.ts';
import { remove } from './tools/delete.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';

/** Autonomy policies (stored in the governance database every service shares). */
export const policiesModule = defineModule({
  name: 'policies',
  tools: [create, update, remove, list],
  reads: { sources: { policies: policiesSource } },
});
