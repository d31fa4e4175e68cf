import { defineModule } from '@cuadra/shared';
import { agents } from './model.ts';
import { agentsSource } from './sources.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';

/** AI agents registered in the workspace. */
export const agentsModule = defineModule({
  name: 'agents',
  tools: [create, get, list],
  models: [agents],
  listed: [{ model: agents }],
  reads: { sources: { agents: agentsSource } },
  readGuards: { 'Query.agent': 'agents', 'Query.agents': 'agents', Agent: 'agents' },
});
