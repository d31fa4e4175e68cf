import { clampLimit, defineSubgraph, entityResolvers, pageNewestFirst, type SubgraphContext } from '@cuadra/shared';
import { sealPlainEpayrollSettings } from './modules/payroll/epayroll.ts';
import { employees, type EmployeeDoc } from './modules/employees/model.ts';
import { owned } from './modules/index.ts';

function employeeNode(e: EmployeeDoc) {
  return { id: e._id, name: e.name, position: e.position, status: e.status, hireDate: e.hire_date };
}

const employee = entityResolvers(employees, employeeNode);

/** The payroll subgraph: its modules' manifests, and the graph fields of employees. */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'payroll',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  resolvers: {
    Query: {
      employee: employee.byId,
      employees: async (_: unknown, args: { limit?: number; status?: string }, ctx: SubgraphContext) => {
        const match = args.status ? (e: EmployeeDoc) => e.status === args.status : undefined;
        const page = await pageNewestFirst<EmployeeDoc>(employees(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
        return page.rows.map(employeeNode);
      },
    },
    Employee: employee.reference,
  },
  async prepare(_server, deps) {
    // E-payroll software PINs written in plain text before they were sealed (CONTRACT §9).
    const sealed = await sealPlainEpayrollSettings(deps.db);
    if (sealed > 0) deps.log.info({ sealed }, 'e-payroll software PINs sealed at rest');
  },
});
