import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { EMPLOYEE_VIEW_SCHEMA, employeeView, salaryHistoryOf } from '../model.ts';
import { assertActive, loadEmployee, updateSeen } from '../ops.ts';
import { assertMinimumWage } from '../wage.ts';
import { PAYROLL_AMOUNT_SCHEMA } from '../../../money.ts';

/**
 * A new monthly salary from a date on. The history is kept: runs pay each day at the salary of
 * its own date, so a period spanning the change pays each salary for its days.
 */
export const changeSalary = defineTool({
  name: 'employees.change_salary',
  description: 'Set an active employee\'s monthly salary (integer cents, the employee\'s currency) from an effective date on. The history is kept; a payroll period that spans the date pays each salary for its own days. The date must be after the hire date and after the last change; a COP salary on a labour contract must reach the minimum wage of that year.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'amount', 'effective_from'],
    properties: {
      id: ID_SCHEMA,
      amount: PAYROLL_AMOUNT_SCHEMA,
      effective_from: DATE_SCHEMA,
    },
  } as const,
  output: recordOutput('employee', EMPLOYEE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const seen = await loadEmployee(ctx, input.id);
    assertActive(seen);
    const history = salaryHistoryOf(seen);
    const last = history[history.length - 1];
    if (input.effective_from <= last.effective_from) {
      throw new CuadraError('invalid_input', `A salary change takes effect after the last one (${last.effective_from}${history.length === 1 ? ', the hire date' : ''}); changes are never rewritten.`, { field: '/effective_from' });
    }
    if (input.amount === last.amount) throw new CuadraError('invalid_input', 'That is already the salary.', { field: '/amount' });
    assertMinimumWage({ amount: input.amount, currency: seen.salary.currency }, seen.contract_type, input.effective_from, '/amount');
    const updated = await updateSeen(ctx, seen, {
      salary: { amount: input.amount, currency: seen.salary.currency },
      salary_history: [...history, { amount: input.amount, effective_from: input.effective_from, changed_at: ctx.now }],
    });
    return { employee: employeeView(updated) };
  },
});
