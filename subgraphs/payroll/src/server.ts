import { clampLimit, createSubgraphServer, pageNewestFirst, subgraphTypeDefs, type SubgraphContext, type SubgraphDeps, type SubgraphServer } from '@cuadra/shared';
import { employees, type EmployeeDoc } from './modules/employees/model.ts';
import { owned } from './modules/index.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'payroll';

/** The composite reads this subgraph's modules answer (the build writes them into the catalog; the gateway routes by them). */
export const reads = owned.reads;

/** Every tool this subgraph owns: the sum of its modules' manifests (src/modules/). */
export const tools = owned.tools;

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url), owned.readers);
}

function employeeNode(e: EmployeeDoc) {
  return { id: e._id, name: e.name, position: e.position, status: e.status, hireDate: e.hire_date };
}

/** Builds the payroll service, ready to listen. */
export function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  return createSubgraphServer(
    {
      name,
      ...owned,
      typeDefs: typeDefs(),
      resolvers: {
        Query: {
          employee: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
            const e = await employees(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
            return e ? employeeNode(e) : null;
          },
          employees: async (_: unknown, args: { limit?: number; status?: string }, ctx: SubgraphContext) => {
            const match = args.status ? (e: EmployeeDoc) => e.status === args.status : undefined;
            const page = await pageNewestFirst<EmployeeDoc>(employees(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
            return page.rows.map(employeeNode);
          },
        },
        Employee: {
          // Entities are resolved within the caller's workspace only: an id from another
          // workspace resolves to null, never to that workspace's data.
          __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) => {
            const e = await employees(ctx.db).findOne({ _id: ref.id, workspace: ctx.workspace }).lean();
            return e ? employeeNode(e) : null;
          },
        },
      },
    },
    deps,
  );
}
