import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { CONTRACT_TYPES, EMPLOYEE_VIEW_SCHEMA, employeeView, type EmployeeDoc } from '../model.ts';
import { assertActive, loadEmployee, updateSeen } from '../ops.ts';
import { contractTerm } from '../term.ts';

/** Changes an active employee's details; the salary changes only through employees.change_salary (it keeps a history). */
export const update = defineTool({
  name: 'employees.update',
  description: 'Change an active employee\'s name, e-mail (null clears it), position, contract type, ARL risk class, or a fixed-term contract\'s term_end (the agreed last day of the term now running: record each renewal). A contract that becomes fixed_term needs a term_end; one that stops being fixed_term drops it. The salary is changed with employees.change_salary (dated, with history); the identity document and hire date are not changed.',
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
      term_end: DATE_SCHEMA,
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
    if (input.contract_type !== undefined || input.term_end !== undefined) {
      const type = input.contract_type ?? seen.contract_type;
      // A fixed-term contract keeps its recorded end unless a new one is given; any other drops it.
      set.term_end = contractTerm(type, input.term_end ?? (type === 'fixed_term' && seen.contract_type === 'fixed_term' ? seen.term_end : undefined), seen.hire_date);
    }
    if (input.arl_class !== undefined) set.arl_class = input.arl_class;
    if (Object.keys(set).length === 0) throw new CuadraError('invalid_input', 'Name at least one field to change.', { field: '' });
    return { employee: employeeView(await updateSeen(ctx, seen, set)) };
  },
});
