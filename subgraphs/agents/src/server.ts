import { clampLimit, defineSubgraph, entityResolvers, pageNewestFirst, type SubgraphContext } from '@cuadra/shared';
import { agents, type AgentDoc } from './modules/agents/model.ts';
import { owned } from './modules/index.ts';

function agentNode(a: AgentDoc) {
  return {
    id: a._id, name: a.name, description: a.description, model: a.model, instructions: a.instructions, tools: a.tools,
    status: a.status, createdAt: a.created_at.toISOString(),
  };
}

const agent = entityResolvers(agents, agentNode);

/** The agents subgraph: its modules' manifests (agents, policies, approvals, ledger) and the graph fields of agents. */
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
    },
    Agent: agent.reference,
  },
});
