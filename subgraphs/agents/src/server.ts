import { clampLimit, createSubgraphServer, pageNewestFirst, subgraphTypeDefs, type SubgraphContext, type SubgraphDeps, type SubgraphServer } from '@cuadra/shared';
import { agents, type AgentDoc } from './modules/agents/model.ts';
import { owned } from './modules/index.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'agents';

/** The composite reads this subgraph answers (the build writes them into the catalog; the gateway routes by them). */
export const reads = owned.reads;

/** Every tool this subgraph owns: the sum of its modules' manifests (src/modules/). */
export const tools = owned.tools;

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url), owned.readers);
}

function agentNode(a: AgentDoc) {
  return {
    id: a._id, name: a.name, description: a.description, model: a.model, instructions: a.instructions, tools: a.tools,
    status: a.status, createdAt: a.created_at.toISOString(),
  };
}

/** Builds the agents service, ready to listen. */
export function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  return createSubgraphServer(
    {
      name,
      ...owned,
      maintenance: true,
      typeDefs: typeDefs(),
      resolvers: {
        Query: {
          agent: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
            const a = await agents(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
            return a ? agentNode(a) : null;
          },
          agents: async (_: unknown, args: { limit?: number }, ctx: SubgraphContext) => {
            const page = await pageNewestFirst<AgentDoc>(agents(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit) });
            return page.rows.map(agentNode);
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
