import { defineGetTool } from '@cuadra/shared';
import { AGENT_VIEW_SCHEMA, agents, agentView, type AgentDoc } from '../model.ts';

/** Reads one agent of the caller's workspace. */
export const get = defineGetTool<AgentDoc>({
  name: 'agents.get',
  description: 'Get one AI agent by id, with its model, instructions, tool patterns and status.',
  model: agents,
  view: agentView,
  viewSchema: AGENT_VIEW_SCHEMA,
  key: 'agent',
  what: 'agent',
});
