import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput, withLock, type ToolContext } from '@cuadra/shared';
import { firstNoveltyAfter, vacationDaysTaken } from '../../payroll/novelties.ts';
import { payrollRuns, runLock } from '../../payroll/runs.ts';
import { finalSettlement, SettlementNotComputable, TERMINATION_REASONS } from '../../payroll/settlement.ts';
import { EMPLOYEE_VIEW_SCHEMA, employees, employeeView, salaryHistoryOf } from '../model.ts';
import { assertActive, loadEmployee, updateSeen } from '../ops.ts';

/** A live run that pays the employee on `date` or later, if any. */
function liveRunPaying(ctx: Pick<ToolContext, 'db' | 'workspace'>, employeeId: string, date: string) {
  return payrollRuns(ctx.db).findOne(
    { workspace: ctx.workspace, status: { $ne: 'void' }, 'period.to': { $gte: date }, 'payslips.employee_id': employeeId },
    { _id: 1, period: 1, status: 1 },
  ).lean();
}

/**
 * Ends a contract on a date and computes the final settlement, the indemnity of CST art. 64
 * included when one is owed. The payroll run covering the last day carries the settlement into
 * the books and the Nómina Individual, so that run is computed after the termination: one already
 * live is refused. Under the month's run lock, so a run of that month cannot be computed meanwhile.
 */
export const terminate = defineTool({
  name: 'employees.terminate',
  description: 'End an active employee\'s contract on a date (its last day), with the reason. Computes and keeps the final settlement: severance and its interest for the days of the year, the service bonus of the running semester, the vacations earned and not taken (vacation novelties count as taken) and, for without_just_cause (or constructive_dismissal: the worker leaving for the employer\'s just cause), the indemnity of CST art. 64 (Ley 789 de 2002 art. 28) — fixed term: the salaries of the rest of the agreed term (term_end), at least 15 days; indefinite: 30 days for the first year and 20 for each further one, pro rata (20 and 15 from 10 minimum wages). The payroll run of the period that holds that day pays the employee up to it and carries the settlement (its journal releases the provisions and books it); a live run already covering that day or later is refused (void it first). Not reversible.',
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
    return withLock(ctx.db, runLock(ctx.workspace, input.date.slice(0, 7)), async () => {
      const later = await firstNoveltyAfter(ctx, seen._id, input.date);
      if (later) throw new CuadraError('conflict', `A ${later.type} novelty falls on ${later.date}, after the last day of the contract; delete it first.`);
      const refusePaying = (run: { _id: string; status: string; period: { from: string; to: string } }) => new CuadraError('conflict',
        `The ${run.status} payroll run ${run._id} of ${run.period.from}–${run.period.to} pays ${seen.name} on or after ${input.date}; void it first, so that the run of that period carries the final settlement.`);
      const paying = await liveRunPaying(ctx, seen._id, input.date);
      if (paying) throw refusePaying(paying);
      let settlement;
      try {
        settlement = finalSettlement({
          hire_date: seen.hire_date, termination_date: input.date,
          salaries: history.map((s) => ({ from: s.effective_from, amount: s.amount })),
          vacation_days_taken: await vacationDaysTaken(ctx, seen._id, input.date),
          reason: input.reason, contract_type: seen.contract_type, term_end: seen.term_end ?? null,
        });
      } catch (err) {
        if (err instanceof SettlementNotComputable) throw new CuadraError('conflict', `${err.message} Record it with employees.update (term_end), then terminate.`);
        throw err;
      }
      const updated = await updateSeen(ctx, seen, {
        status: 'terminated',
        termination: { date: input.date, reason: input.reason, note: input.note ?? null, settlement: { lines: settlement.lines, total: settlement.total }, at: ctx.now },
      });
      // A run of a later month (another lock) may have read the contract as running before this
      // update: read the runs again now. The run does the same after it is written (payroll.run),
      // so one of the two sees the other; here the termination is undone and refused.
      const slipped = await liveRunPaying(ctx, seen._id, input.date);
      if (slipped) {
        await employees(ctx.db).updateOne(
          { _id: seen._id, workspace: ctx.workspace, status: 'terminated', rev: updated.rev },
          { $set: { status: 'active', termination: null, updated_at: ctx.now }, $inc: { rev: 1 } },
        );
        throw refusePaying(slipped);
      }
      return { employee: employeeView(updated) };
    });
  },
});
