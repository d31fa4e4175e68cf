import { create as createAgent } from './agents/create.ts';
import { get as getAgent } from './agents/get.ts';
import { list as listAgents } from './agents/list.ts';

/** Every tool the agents subgraph owns. */
export const tools = [createAgent, getAgent, listAgents];

/** Tool modules the agents (AI and governance) subgraph owns (DOMAIN.md). */
export const modules = [
  'agents', 'ai_models', 'mcp_servers', 'connections', 'approvals', 'policies', 'members', 'roles', 'api_keys', 'dashboards', 'ledger',
] as const;
