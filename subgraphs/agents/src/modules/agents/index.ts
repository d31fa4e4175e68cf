import { defineModule } from '@cuadra/shared';
import { agents } from './model.ts';
import { agentsSource } from './sources.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { run } from './tools/run.ts';
import { update } from './tools/update.ts';

/** AI agents registered in the workspace. */
export const agentsModule = defineModule({
  name: 'agents',
  tools: [create, update, archive, get, list, run],
  models: [agents],
  listed: [{ model: agents }],
  reads: { sources: { agents: agentsSource } },
  readGuards: { 'Query.agent': 'agents', 'Query.agents': 'agents', Agent: 'agents' },
});
