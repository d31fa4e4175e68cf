import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { finalSettlement } from '../../payroll/settlement.ts';
import { firstNoveltyAfter, vacationDaysTaken } from '../../payroll/novelties.ts';
import { EMPLOYEE_VIEW_SCHEMA, employeeView, salaryHistoryOf, TERMINATION_REASONS } from '../model.ts';
import { assertActive, loadEmployee, updateSeen } from '../ops.ts';

/** Ends a contract on a date and computes the final settlement. */
export const terminate = defineTool({
  name: 'employees.terminate',
  description: 'End an active employee\'s contract on a date (its last day), with the reason. Computes and keeps the final settlement: severance and its interest for the days of the year, the service bonus of the running semester, and the vacations earned and not taken (vacation novelties count as taken). Payroll runs pay the employee up to that day. Not reversible; the indemnity for dismissal without just cause is not computed.',
  risk: 'destructive',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'date', 'reason'],
    properties: {
      id: ID_SCHEMA,
      date: DATE_SCHEMA,
      reason: { enum: [...TERMINATION_REASONS] },
      note: { type: 'string', minLength: 1, maxLength: 1000 },
    },
  } as const,
  output: recordOutput('employee', EMPLOYEE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const seen = await loadEmployee(ctx, input.id);
    assertActive(seen);
    if (input.date < seen.hire_date) throw new CuadraError('invalid_input', `The contract cannot end before the hire date ${seen.hire_date}.`, { field: '/date' });
    const history = salaryHistoryOf(seen);
    const after = history.find((s) => s.effective_from > input.date);
    if (after) throw new CuadraError('invalid_input', `A salary change takes effect on ${after.effective_from}, after that date.`, { field: '/date' });
    const later = await firstNoveltyAfter(ctx, seen._id, input.date);
    if (later) throw new CuadraError('conflict', `A ${later.type} novelty falls on ${later.date}, after the last day of the contract; delete it first.`);
    const settlement = finalSettlement({
      hire_date: seen.hire_date, termination_date: input.date,
      salaries: history.map((s) => ({ from: s.effective_from, amount: s.amount })),
      vacation_days_taken: await vacationDaysTaken(ctx, seen._id, input.date),
    });
    const updated = await updateSeen(ctx, seen, {
      status: 'terminated',
      termination: { date: input.date, reason: input.reason, note: input.note ?? null, settlement: { lines: settlement.lines, total: settlement.total }, at: ctx.now },
    });
    return { employee: employeeView(updated) };
  },
});
