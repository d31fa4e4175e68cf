import { defineListTool, searchTerm } from '@cuadra/shared';
import { AGENT_VIEW_SCHEMA, agents, agentView, type AgentDoc } from '../../models/agent.ts';

/** Lists the workspace's agents, newest first. */
export const list = defineListTool<AgentDoc, { status?: AgentDoc['status']; search?: string; limit?: number; cursor?: string }>({
  name: 'agents.list',
  description: 'List AI agents of the workspace, newest first; filter by status (active, paused) or a case-insensitive name search.',
  model: agents,
  view: agentView,
  viewSchema: AGENT_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'paused'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    return status || text ? (a) => (!status || a.status === status) && (!text || a.name_lc.includes(text)) : undefined;
  },
});
