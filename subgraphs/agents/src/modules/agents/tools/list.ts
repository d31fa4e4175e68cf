import { defineListTool, searchTerm } from '@cuadra/shared';
import { AGENT_VIEW_SCHEMA, agentMatches, agents, agentView } from '../model.ts';

/** Lists the workspace's agents, newest first. */
export const list = defineListTool({
  name: 'agents.list',
  description: 'List AI agents of the workspace, newest first; filter by status (active, paused, archived) or a case-insensitive search of the name, description or model.',
  model: agents,
  view: agentView,
  viewSchema: AGENT_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'paused', 'archived'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    return status || text ? (a) => (!status || a.status === status) && (!text || agentMatches(a, text)) : undefined;
  },
});
