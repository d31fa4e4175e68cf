import { defineModule } from '@cuadra/shared';
import { agents } from '../models/agent.ts';
import { create } from '../tools/agents/create.ts';
import { get } from '../tools/agents/get.ts';
import { list } from '../tools/agents/list.ts';

/** AI agents registered in the workspace. */
export const agentsModule = defineModule({
  name: 'agents',
  tools: [create, get, list],
  models: [agents],
  listed: [{ model: agents }],
  reads: { sources: { agents: { field: 'agentsRecords', module: 'agents' } } },
  readGuards: { 'Query.agent': 'agents', 'Query.agents': 'agents', Agent: 'agents' },
});
