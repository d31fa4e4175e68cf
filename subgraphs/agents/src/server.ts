import { clampLimit, defineSubgraph, entityResolvers, nodeById, pageNewestFirst, sealerFromEnv, type SubgraphContext } from '@cuadra/shared';
import { embeddedModel } from './lib/embedded.ts';
import { AgentRuntime } from './lib/runtime.ts';
import { agentRuns, type AgentRunDoc } from './modules/agent_runs/model.ts';
import { agents, type AgentDoc } from './modules/agents/model.ts';
import { connectionTokenRoute } from './modules/connections/token-route.ts';
import { owned } from './modules/index.ts';
import { WebhookDeliverer } from './modules/webhooks/deliverer.ts';

function agentNode(a: AgentDoc) {
  return {
    id: a._id, name: a.name, description: a.description, model: a.model, instructions: a.instructions, tools: a.tools,
    status: a.status, createdAt: a.created_at.toISOString(),
  };
}

function runNode(r: AgentRunDoc) {
  return {
    id: r._id, agent: { id: r.agent_id }, status: r.status, stopReason: r.stop_reason, input: r.input, output: r.output, waitingApprovalId: r.waiting?.approval_id ?? null,
    steps: r.steps.length, inputTokens: r.usage.input_tokens, outputTokens: r.usage.output_tokens, costMicros: r.usage.cost_micros, currency: r.currency,
    createdAt: new Date(r.created_at).toISOString(), finishedAt: r.finished_at ? new Date(r.finished_at).toISOString() : null,
  };
}

const agent = entityResolvers(agents, agentNode);
const run = entityResolvers(agentRuns, runNode);
const agentById = nodeById(agents, agentNode);

/** The agents subgraph: its modules' manifests (agents and their runs, models, connections, MCP servers, policies, approvals, ledger), its graph fields, and the agent runtime. */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'agents',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  // This service expires pending approvals and old idempotency records for everyone.
  maintenance: true,
  resolvers: {
    Query: {
      agent: agent.byId,
      agents: async (_: unknown, args: { limit?: number }, ctx: SubgraphContext) => {
        const page = await pageNewestFirst<AgentDoc>(agents(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit) });
        return page.rows.map(agentNode);
      },
      agentRun: run.byId,
      agentRuns: async (_: unknown, args: { limit?: number; agentId?: string }, ctx: SubgraphContext) => {
        const page = await pageNewestFirst<AgentRunDoc>(agentRuns(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), ...(args.agentId ? { match: (r: AgentRunDoc) => r.agent_id === args.agentId } : {}) });
        return page.rows.map(runNode);
      },
    },
    Agent: agent.reference,
    AgentRun: { ...run.reference, agent: (r: { agent: { id: string } }, _: unknown, ctx: SubgraphContext) => agentById(r.agent.id, ctx) },
  },
  // The runtime works on runs in this process (runAgents: false leaves them to a test that drives it).
  async prepare(server, deps) {
    // Other services of the deployment read a connection's access token here (never a caller: not a tool, not in the graph).
    server.app.use(connectionTokenRoute(deps.db, deps.peers, sealerFromEnv(), deps.log));
    const runtime = new AgentRuntime({
      db: deps.db, governance: deps.governance, log: deps.log, sealer: sealerFromEnv(),
      gatewayUrl: process.env.CUADRA_GATEWAY_URL?.replace(/\/+$/, '') ?? null, serviceKey: deps.peers?.privateKey ?? null,
    });
    if (process.env.CUADRA_AGENT_RUNTIME !== 'off') runtime.start();
    // Webhook messages go out from every instance (each claim is a conditional write); tests without the sweep drive it by hand.
    const deliverer = new WebhookDeliverer({ db: deps.db, governance: deps.governance, log: deps.log, sealer: sealerFromEnv() });
    if (deps.runApprovals !== false && process.env.CUADRA_WEBHOOKS !== 'off') deliverer.start();
    const stop = server.stop;
    server.stop = async () => {
      await deliverer.stop();
      await runtime.stop();
      await embeddedModel.stop();
      await stop();
    };
  },
});
