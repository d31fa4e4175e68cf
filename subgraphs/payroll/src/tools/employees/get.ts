import { CuadraError, defineTool } from '@cuadra/shared';
import { employees, employeeView } from '../../models/employee.ts';

/** Reads one employee of the caller's workspace. */
export const get = defineTool<{ id: string }>({
  name: 'employees.get',
  description: 'Get one employee by id, with identity document, position, hire date, salary, contract type and ARL class.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  },
  async handler(input, ctx) {
    const employee = await employees(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!employee) throw new CuadraError('not_found', `No employee ${input.id} exists in this workspace.`);
    return { employee: employeeView(employee) };
  },
});
