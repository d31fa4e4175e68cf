import { fromModules } from '@cuadra/shared';
import { agentsModule } from './agents/index.ts';
import { approvalsModule } from './approvals/index.ts';
import { ledgerModule } from './ledger/index.ts';
import { policiesModule } from './policies/index.ts';

/**
 * The agents (AI and governance) subgraph: its built modules, then those DOMAIN.md assigns it that
 * are not built yet — less `members`, `roles` and `api_keys`, which the gateway owns with the
 * identity data, and `dashboards`, served where the composed graph is (ARCHITECTURE.md).
 */
export const owned = fromModules('agents', [agentsModule, policiesModule, approvalsModule, ledgerModule], ['ai_models', 'mcp_servers', 'connections']);
