import { clampLimit, createSubgraphServer, pageNewestFirst, type SubgraphContext, type SubgraphDeps, type SubgraphServer, subgraphTypeDefs } from '@cuadra/shared';
import { owned } from './modules/index.ts';
import { parties, partyView, type PartyDoc } from './modules/parties/model.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'crm';

/** The composite reads this subgraph's modules answer (the build writes them into the catalog; the gateway routes by them). */
export const reads = owned.reads;

/** Every tool the crm subgraph owns: the sum of its modules' manifests (src/modules/). */
export const tools = owned.tools;

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url), owned.readers);
}

function partyNode(p: PartyDoc) {
  const v = partyView(p);
  return { ...v, taxId: p.tax_id ? `${p.tax_id.number}${p.tax_id.check_digit === null ? '' : `-${p.tax_id.check_digit}`}` : null, taxIdentity: p.tax_id ? { type: p.tax_id.type, number: p.tax_id.number, checkDigit: p.tax_id.check_digit ?? null } : null, createdAt: v.created_at };
}

/** Builds the crm service, ready to listen. */
export function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  return createSubgraphServer(
    {
      name,
      ...owned,
      typeDefs: typeDefs(),
      resolvers: {
        Query: {
          party: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
            const p = await parties(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
            return p ? partyNode(p) : null;
          },
          // Finance finds a supplier of an uploaded e-invoice by its NIT: the unique tax_key, one indexed read.
          partyByTaxId: async (_: unknown, args: { type: string; number: string }, ctx: SubgraphContext) => {
            const p = await parties(ctx.db).findOne({ tax_key: `${ctx.workspace}:${args.type}:${args.number}`, workspace: ctx.workspace }).lean();
            return p ? partyNode(p) : null;
          },
          parties: async (_: unknown, args: { search?: string; kind?: string; limit?: number }, ctx: SubgraphContext) => {
            const text = args.search?.toLowerCase();
            const match = args.kind || text ? (p: PartyDoc) => (!args.kind || p.kind === args.kind) && (!text || p.name_lc.includes(text)) : undefined;
            const page = await pageNewestFirst<PartyDoc>(parties(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
            return page.rows.map(partyNode);
          },
        },
        Party: {
          // Entities are resolved within the caller's workspace only: an id from another
          // workspace resolves to null, never to that workspace's data.
          __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) => {
            const p = await parties(ctx.db).findOne({ _id: ref.id, workspace: ctx.workspace }).lean();
            return p ? partyNode(p) : null;
          },
        },
      },
    },
    deps,
  );
}
