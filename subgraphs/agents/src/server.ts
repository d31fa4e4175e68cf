import { createSubgraphServer, subgraphTypeDefs, type SubgraphContext, type SubgraphDeps, type SubgraphServer } from '@cuadra/shared';
import { agents, type AgentDoc } from './models/agent.ts';
import { modules, tools } from './tools/index.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'agents';

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url));
}

function agentNode(a: AgentDoc) {
  return {
    id: a._id, name: a.name, description: a.description, model: a.model, instructions: a.instructions, tools: a.tools,
    status: a.status, createdAt: a.created_at.toISOString(),
  };
}

/** Builds the agents service, ready to listen. */
export async function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  // Agent names are unique per workspace by index: it must exist before the first agent is created.
  await agents(deps.db).init();
  return createSubgraphServer(
    {
      name,
      modules,
      tools,
      typeDefs: typeDefs(),
      resolvers: {
        Query: {
          agent: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
            const a = await agents(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
            return a ? agentNode(a) : null;
          },
          agents: async (_: unknown, args: { limit?: number }, ctx: SubgraphContext) => {
            const rows = await agents(ctx.db).find({ workspace: ctx.workspace }).sort({ created_at: -1, _id: -1 }).limit(Math.min(Math.max(args.limit ?? 20, 1), 100)).lean();
            return rows.map(agentNode);
          },
        },
        Agent: {
          // Entities are resolved within the caller's workspace only: an id from another
          // workspace resolves to null, never to that workspace's data.
          __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) => {
            const a = await agents(ctx.db).findOne({ _id: ref.id, workspace: ctx.workspace }).lean();
            return a ? agentNode(a) : null;
          },
        },
      },
    },
    deps,
  );
}
