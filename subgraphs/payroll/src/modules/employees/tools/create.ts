import { createPositioned, CuadraError, DATE_SCHEMA, defineTool, newId, recordOutput, repeatableId, storedUnderId } from '@cuadra/shared';
import { PAYROLL_AMOUNT_SCHEMA } from '../../../money.ts';
import { CONTRACT_TYPES, DOCUMENT_TYPES, EMPLOYEE_VIEW_SCHEMA, employees, employeeView, type EmployeeDoc } from '../model.ts';
import { assertMinimumWage } from '../wage.ts';
import { contractTerm } from '../term.ts';

/**
 * The document number as stored: separators dropped, upper case. Cédulas and NITs are digits
 * only; a passport number may carry letters. Null when it is not a number of that type.
 */
function normalizeDocumentNumber(type: EmployeeDoc['document']['type'], raw: string): string | null {
  const number = raw.replace(/[.\s-]/g, '').toUpperCase();
  const shape = type === 'PASSPORT' ? /^[A-Z0-9]{3,20}$/ : /^\d{3,15}$/;
  return shape.test(number) ? number : null;
}

/** Hires an employee. A COP salary under a labour contract must reach the year's minimum wage. */
export const create = defineTool({
  name: 'employees.create',
  description:
    'Register an employee: identity document, position, hire date, monthly salary (integer cents), contract type and ARL risk class (1–5). ' +
    'A COP salary on a labour contract (not `service`) must be at least the Colombian minimum monthly wage of the hire year. ' +
    'A fixed_term contract records term_end, the agreed last day of its term (CST art. 46: in writing, with its term); other contracts have none.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'document', 'position', 'hire_date', 'salary', 'contract_type', 'arl_class'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      document: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'number'],
        properties: {
          type: { enum: [...DOCUMENT_TYPES] },
          number: { type: 'string', minLength: 3, maxLength: 30 },
        },
      },
      email: { type: 'string', format: 'email', maxLength: 254 },
      position: { type: 'string', minLength: 1, maxLength: 200 },
      hire_date: { type: 'string', format: 'date' },
      salary: {
        type: 'object',
        additionalProperties: false,
        required: ['amount', 'currency'],
        properties: {
          amount: PAYROLL_AMOUNT_SCHEMA,
          currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        },
      },
      contract_type: { enum: [...CONTRACT_TYPES] },
      /** A fixed-term contract's agreed last day (required for one, refused for others). */
      term_end: DATE_SCHEMA,
      arl_class: { enum: [1, 2, 3, 4, 5] },
    },
  },
  output: recordOutput('employee', EMPLOYEE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const number = normalizeDocumentNumber(input.document.type, input.document.number);
    if (!number) {
      const shape = input.document.type === 'PASSPORT' ? 'letters and digits' : 'digits (dots and spaces are ignored)';
      throw new CuadraError('invalid_input', `A ${input.document.type} number is made of ${shape}.`, { field: '/document/number' });
    }
    assertMinimumWage(input.salary, input.contract_type, input.hire_date, '/salary/amount');
    const termEnd = contractTerm(input.contract_type, input.term_end, input.hire_date);
    const doc: EmployeeDoc = {
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's employee the store applies late is this one.
      _id: repeatableId('emp') ?? newId('emp'),
      workspace: ctx.workspace,
      name: input.name.trim(),
      name_lc: input.name.trim().toLowerCase(),
      document: { type: input.document.type, number },
      email: input.email ?? null,
      position: input.position.trim(),
      hire_date: input.hire_date,
      salary: { amount: input.salary.amount, currency: input.salary.currency },
      contract_type: input.contract_type,
      term_end: termEnd,
      arl_class: input.arl_class,
      status: 'active',
      salary_history: [{ amount: input.salary.amount, effective_from: input.hire_date, changed_at: null }],
      termination: null,
      rev: 0,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    try {
      await createPositioned(employees(ctx.db), doc);
    } catch (err) {
      // This call's employee, stored by an attempt whose insert the store applied late: answered as it is, not refused as a duplicate document number.
      const known = await storedUnderId(err, employees(ctx.db), doc._id, ctx.workspace);
      if (known) return { employee: employeeView(known) };
      if ((err as { code?: number }).code === 11000) {
        throw new CuadraError('conflict', `An employee with document number ${number} already exists in this workspace.`);
      }
      throw err;
    }
    return { employee: employeeView(doc) };
  },
});
