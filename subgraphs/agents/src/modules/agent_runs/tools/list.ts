import { defineListTool, ID_SCHEMA, searchTerm } from '@cuadra/shared';
import { agentRuns, RUN_STATUSES, RUN_VIEW_SCHEMA, runMatches, runView } from '../model.ts';

/** The workspace's agent runs, newest first. */
export const list = defineListTool({
  name: 'agent_runs.list',
  description: 'List agent runs, newest first; filter by status (queued, running, waiting_approval, succeeded, failed, cancelled, timed_out), agent, or a search of the agent\'s name, the task and the answer.',
  model: agentRuns,
  view: runView,
  viewSchema: RUN_VIEW_SCHEMA,
  filters: { status: { enum: [...RUN_STATUSES] }, agent_id: ID_SCHEMA, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, agent_id, search }) => {
    const text = searchTerm(search);
    return status || agent_id || text ? (r) => (!status || r.status === status) && (!agent_id || r.agent_id === agent_id) && (!text || runMatches(r, text)) : undefined;
  },
});
