import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { CONTRACT_TYPES, EMPLOYEE_VIEW_SCHEMA, employeeView, type EmployeeDoc } from '../model.ts';
import { assertActive, loadEmployee, updateSeen } from '../ops.ts';

/** Changes an active employee's details; the salary changes only through employees.change_salary (it keeps a history). */
export const update = defineTool({
  name: 'employees.update',
  description: 'Change an active employee\'s name, e-mail (null clears it), position, contract type or ARL risk class. The salary is changed with employees.change_salary (dated, with history); the identity document and hire date are not changed.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: {
      id: ID_SCHEMA,
      name: { type: 'string', minLength: 1, maxLength: 200 },
      email: { type: ['string', 'null'], format: 'email', maxLength: 254 },
      position: { type: 'string', minLength: 1, maxLength: 200 },
      contract_type: { enum: [...CONTRACT_TYPES] },
      arl_class: { enum: [1, 2, 3, 4, 5] },
    },
  } as const,
  output: recordOutput('employee', EMPLOYEE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const seen = await loadEmployee(ctx, input.id);
    assertActive(seen);
    const set: Partial<EmployeeDoc> = {};
    if (input.name !== undefined) {
      if (!input.name.trim()) throw new CuadraError('invalid_input', 'A name has at least one visible character.', { field: '/name' });
      set.name = input.name.trim();
      set.name_lc = set.name.toLowerCase();
    }
    if (input.email !== undefined) set.email = input.email;
    if (input.position !== undefined) {
      if (!input.position.trim()) throw new CuadraError('invalid_input', 'A position has at least one visible character.', { field: '/position' });
      set.position = input.position.trim();
    }
    if (input.contract_type !== undefined) set.contract_type = input.contract_type;
    if (input.arl_class !== undefined) set.arl_class = input.arl_class;
    if (Object.keys(set).length === 0) throw new CuadraError('invalid_input', 'Name at least one field to change.', { field: '' });
    return { employee: employeeView(await updateSeen(ctx, seen, set)) };
  },
});
