import { fromModules } from '@cuadra/shared';
import { agentRunsModule } from './agent_runs/index.ts';
import { agentsModule } from './agents/index.ts';
import { aiModelsModule } from './ai_models/index.ts';
import { approvalsModule } from './approvals/index.ts';
import { connectionsModule } from './connections/index.ts';
import { ledgerModule } from './ledger/index.ts';
import { mcpServersModule } from './mcp_servers/index.ts';
import { policiesModule } from './policies/index.ts';
import { webhooksModule } from './webhooks/index.ts';

/**
 * The agents (AI and governance) subgraph: its modules — DOMAIN.md's list, less `members`, `roles` and `api_keys`, which the gateway owns with the
 * identity data, and `dashboards`, served where the composed graph is (ARCHITECTURE.md).
 */
export const owned = fromModules('agents', [
  agentsModule, agentRunsModule, aiModelsModule, connectionsModule, mcpServersModule, policiesModule, approvalsModule, ledgerModule, webhooksModule,
]);
