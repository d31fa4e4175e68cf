import { create as createAgent } from './agents/create.ts';
import { get as getAgent } from './agents/get.ts';
import { list as listAgents } from './agents/list.ts';
import { decide as decideApproval } from './approvals/decide.ts';
import { get as getApproval } from './approvals/get.ts';
import { list as listApprovals } from './approvals/list.ts';
import { list as listLedger } from './ledger/list.ts';
import { verify as verifyLedger } from './ledger/verify.ts';
import { create as createPolicy } from './policies/create.ts';
import { remove as deletePolicy } from './policies/delete.ts';
import { list as listPolicies } from './policies/list.ts';
import { update as updatePolicy } from './policies/update.ts';

/** Every tool the agents subgraph owns. */
export const tools = [
  createAgent, getAgent, listAgents,
  createPolicy, updatePolicy, deletePolicy, listPolicies,
  listApprovals, getApproval, decideApproval,
  listLedger, verifyLedger,
];

/**
 * Tool modules the agents (AI and governance) subgraph owns (DOMAIN.md, less `members`,
 * `roles` and `api_keys`, which the gateway owns with the identity data, and `dashboards`, which the
 * gateway serves where the composed graph is: ARCHITECTURE.md).
 */
export const modules = ['agents', 'ai_models', 'mcp_servers', 'connections', 'approvals', 'policies', 'ledger'] as const;
