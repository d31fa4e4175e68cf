import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { EmployeeDoc, Termination } from '../employees/model.ts';
import type { PayrollResult } from './calc.ts';
import { payrollRuns, type Payslip, type PayslipSettlement, type SettlementRelease } from './runs.ts';
import type { SettlementConcept } from './settlement.ts';

/**
 * What a final settlement releases of the provisions the books hold for it (issue 30 item 9).
 * Each month a run provisions severance, its interest, the service bonus and vacations (Dr 5105xx,
 * Cr 2610xx); when the contract ends, the settlement pays them, so the run of the last day
 * releases what was provisioned for the very amounts it pays — from the posted runs, plus its own
 * period's provisions — and books only the difference to the expense:
 * - severance and its interest: the provisions of the termination year (from 1 January, or the
 *   hire date): earlier years' severance was consigned to the fund and their interest paid, as the
 *   settlement itself assumes (settlement.ts);
 * - the service bonus: those of the running semester (from 1 January or 1 July, or the hire date);
 * - vacations: every provision since the hire date, less the vacations taken (paid out of it);
 * - the indemnity: nothing (it is never provisioned).
 * The books must hold what is released: an earlier run of the employee not yet posted (computed or
 * approved) is refused — post or void it first — and the posted runs released are named, so none
 * of them is voided while the settlement stands (payroll.void).
 */

/** A payslip of the employee in a posted run: the run's id, the payslip's period, provisions and earnings. */
interface PostedSlip { run: string; period: { from: string; to: string }; result: Pick<PayrollResult, 'provisions' | 'earnings'> }

/** The window each provision concept is released from (see above). */
function windows(e: Pick<EmployeeDoc, 'hire_date'>, date: string): Record<Exclude<SettlementConcept, 'indemnity'>, string> {
  const later = (a: string, b: string) => (a > b ? a : b);
  const year = date.slice(0, 4);
  const semester = date.slice(5) >= '07-01' ? `${year}-07-01` : `${year}-01-01`;
  const yearStart = later(`${year}-01-01`, e.hire_date);
  return { severance: yearStart, severance_interest: yearStart, service_bonus: later(semester, e.hire_date), vacations: e.hire_date };
}

/** The employee's payslips in the workspace's posted runs (one aggregation: the runs' other payslips stay on the server). */
async function postedSlips(ctx: Pick<ToolContext, 'db' | 'workspace'>, employeeId: string): Promise<PostedSlip[]> {
  const rows = await payrollRuns(ctx.db).aggregate<{ _id: string; payslips: Payslip }>([
    { $match: { workspace: ctx.workspace, status: 'posted', 'payslips.employee_id': employeeId } },
    { $unwind: '$payslips' },
    { $match: { 'payslips.employee_id': employeeId } },
    { $project: { payslips: 1 } },
  ]);
  return rows.map((r) => ({ run: r._id, period: r.payslips.period, result: r.payslips.result }));
}

/**
 * The settlement of `termination` as the run whose payslip ends on its date carries it: each
 * line with the provisions it releases and the difference. `current` is that payslip's own result
 * (its provisions count, the run being posted with the release), `from` its first day.
 */
export async function settlementRelease(
  ctx: Pick<ToolContext, 'db' | 'workspace'>, e: Pick<EmployeeDoc, '_id' | 'name' | 'hire_date'>, termination: Termination, current: PayrollResult, from: string,
): Promise<PayslipSettlement> {
  const pending = await payrollRuns(ctx.db).findOne(
    { workspace: ctx.workspace, status: { $in: ['computed', 'approved'] }, 'payslips.employee_id': e._id, 'period.to': { $lt: from } },
    { _id: 1, period: 1, status: 1 },
  ).lean();
  if (pending) {
    throw new CuadraError('conflict', `The ${pending.status} run ${pending._id} of ${pending.period.from}–${pending.period.to} pays ${e.name} and is not posted: its provisions are not in the books for the final settlement to release. Post or void it first.`);
  }
  const since = windows(e, termination.date);
  const slips = [...await postedSlips(ctx, e._id), { run: null, period: { from, to: termination.date }, result: current }];
  const released = new Set<string>();
  const provisioned = (concept: Exclude<SettlementConcept, 'indemnity'>): number => {
    let total = 0;
    for (const s of slips) {
      if (s.period.from < since[concept]) continue;
      const provided = s.result.provisions.filter((l) => l.concept === concept).reduce((t, l) => t + l.amount, 0);
      // Vacations taken were paid out of the provision (runs.ts: earnings 'vacations' debit 261015).
      const used = concept === 'vacations' ? s.result.earnings.filter((l) => l.concept === 'vacations').reduce((t, l) => t + l.amount, 0) : 0;
      if ((provided || used) && s.run) released.add(s.run);
      total += provided - used;
    }
    return total;
  };
  const lines: SettlementRelease[] = termination.settlement.lines.map((l) => {
    const held = l.concept === 'indemnity' ? 0 : provisioned(l.concept);
    return { ...l, provisioned: held, difference: l.amount - held };
  });
  return { date: termination.date, reason: termination.reason, lines, total: termination.settlement.total, released_runs: [...released].sort() };
}
