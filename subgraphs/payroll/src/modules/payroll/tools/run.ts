import { CuadraError, defineTool, newId, createPositioned, repeatableId, storedUnderId, withLock, type ToolContext } from '@cuadra/shared';
import { employees, salaryHistoryOf, type EmployeeDoc } from '../../employees/model.ts';
import { calculatePayroll } from '../calc.ts';
import { engineFacts, noveltiesIn, type NoveltyDoc } from '../novelties.ts';
import { ParameterUnknown } from '../parameters.ts';
import { assertWithinMoneyLimit } from '../../../money.ts';
import { settlementRelease } from '../release.ts';
import { entryBalances, payslipNet, resultAmounts, runLock, settlementLock, transition, PAYSLIP_VIEW_SCHEMA, payrollRuns, payslipView, periodOf, RUN_FREQUENCIES, RUN_VIEW_SCHEMA, runEntryLines, runView, type Payslip, type RunDoc } from '../runs.ts';

/** The most employees one run computes (the run is one document; see ARCHITECTURE.md). */
const MAX_EMPLOYEES = 2_000;

/** What one run is computed from: its period, the employees under contract in it and their novelties. */
interface RunFacts {
  month: string; frequency: RunDoc['frequency']; period: { from: string; to: string }; exempt: boolean; inPeriod: EmployeeDoc[]; allNovelties: NoveltyDoc[];
  /** The payslips of the month's first half, when this is its second (their contributions are completed to the month's). */
  earlierSlips: Payslip[];
}

/** Computes every payslip of the run (with a final settlement where a contract ends), its totals and entry, and writes it. */
async function computeAndStore(ctx: ToolContext, { month, frequency, period, exempt, inPeriod, allNovelties, earlierSlips }: RunFacts) {
  const payslips: Payslip[] = [];
  for (const e of inPeriod) {
    const from = e.hire_date > period.from ? e.hire_date : period.from;
    const to = e.termination && e.termination.date < period.to ? e.termination.date : period.to;
    const history = salaryHistoryOf(e);
    let salary = history[0].amount;
    for (const s of history) if (s.effective_from <= from) salary = s.amount;
    const changes = history.filter((s) => s.effective_from > from && s.effective_from <= to).map((s) => ({ from: s.effective_from, salary: s.amount }));
    const facts = engineFacts(allNovelties.filter((n) => n.employee_id === e._id), from, to);
    let result;
    try {
      const earlier = earlierSlips.find((p) => p.employee_id === e._id)?.result;
      result = calculatePayroll({ period: { from, to }, salary, salary_changes: changes, arl_class: e.arl_class, exempt_114_1: exempt, ...facts, ...(earlier ? { earlier } : {}) });
    } catch (err) {
      if (err instanceof ParameterUnknown) throw new CuadraError('invalid_input', `${err.message} The payroll of ${month} cannot be computed yet.`, { field: '/month' });
      if (err instanceof RangeError) throw new CuadraError('conflict', `${e.name}'s novelties do not fit the period: ${err.message}`);
      throw err;
    }
    // The contract ends in this period: its last payslip carries the final settlement into the books.
    const settlement = e.termination && e.termination.date === to ? await settlementRelease(ctx, e, e.termination, result, from) : null;
    // CONTRACT §9: what the run computes from salaries within the bound stays within it too.
    assertWithinMoneyLimit([...resultAmounts(result), ...(settlement?.lines ?? []).map((l): [string, number] => [`the settlement's ${l.concept}`, l.amount]), ['the payslip\'s net pay', result.totals.net + (settlement?.total ?? 0)]],
      `The payroll of ${e.name} for ${from}–${to}`, '/month');
    payslips.push({ employee_id: e._id, name: e.name, document: e.document, position: e.position, period: { from, to }, result, settlement });
  }
  const sum = (k: keyof Payslip['result']['totals']) => payslips.reduce((s, p) => s + p.result.totals[k], 0);
  const totals = {
    employees: payslips.length, earnings: sum('earnings'), employee_contributions: sum('employee_contributions'), deductions: sum('deductions'),
    net: payslips.reduce((s, p) => s + payslipNet(p), 0), employer_contributions: sum('employer_contributions'), provisions: sum('provisions'),
    settlement: payslips.reduce((s, p) => s + (p.settlement?.total ?? 0), 0),
  };
  const released = [...new Set(payslips.flatMap((p) => p.settlement?.released_runs ?? []))].sort();
  // The same id in every attempt of a call that can run again (repeatableId, runs.ts): see ownStoredRun.
  const id = repeatableId('prun') ?? newId('prun');
  const lines = runEntryLines(payslips);
  const debits = lines.reduce((t, l) => t + l.debit, 0);
  assertWithinMoneyLimit([...Object.entries(totals), ['the journal entry\'s debits', debits]], `The payroll of ${period.from}–${period.to}`, '/month');
  if (!entryBalances(lines)) throw new Error(`The journal entry of run ${id} does not balance.`);
  const doc: RunDoc = {
    _id: id, workspace: ctx.workspace, frequency, month, period, currency: 'COP', slot: `${period.from}/${period.to}`,
    status: 'computed', exempt_114_1: exempt, payslips, totals, ...(released.length ? { released_runs: released } : {}),
    journal_entry: { id: `je_${id}`, date: period.to, currency: 'COP', memo: `Nómina ${period.from} a ${period.to}`, lines },
    approved_at: null, posted_at: null, voided_at: null, void_reason: null, created_at: ctx.now, updated_at: ctx.now,
  };
  try {
    await createPositioned(payrollRuns(ctx.db), doc);
  } catch (err) {
    // This call's run, stored by an attempt whose insert the store applied late between this attempt's check and its insert.
    const known = await storedUnderId(err, payrollRuns(ctx.db), id, ctx.workspace);
    if (known) return answerRun(ctx, known);
    if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `A run of ${period.from}–${period.to} was just created by another call.`);
    throw err;
  }
  return answerRun(ctx, doc);
}

/** The answer of a run this call wrote (now, or in an earlier attempt): refused if a contract it pays ended meanwhile. */
async function answerRun(ctx: ToolContext, run: RunDoc) {
  await refuseIfTerminatedMeanwhile(ctx, run);
  return { run: runView(run), payslips: run.payslips.map((p) => payslipView(run, p)) };
}

/**
 * The run an earlier attempt of this call stored, when the call can run again (keyed, or approved)
 * and that attempt's insert was applied after recovery settled it as having written nothing (the
 * store's receive buffer: repeatableId, runs.ts). Its period then has a live run — this call's own —
 * which the rerun answers as it is now instead of refusing it as `conflict` (voided since, it is
 * answered void: the id is the call's, it makes no second run); null otherwise.
 */
async function ownStoredRun(ctx: ToolContext): Promise<RunDoc | null> {
  const id = repeatableId('prun');
  if (!id) return null;
  return payrollRuns(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
}

/**
 * A contract ended on a day this run pays after it, by a termination that happened while the run
 * was computed (employees.terminate locks only its own month; this run may be of a later one): the
 * run, just written and never answered, is voided and the call refused. Read after the run is
 * written, as terminate reads the runs after it writes, so one of the two always sees the other.
 */
async function refuseIfTerminatedMeanwhile(ctx: Parameters<typeof transition>[0], run: RunDoc): Promise<void> {
  const ids = run.payslips.map((p) => p.employee_id);
  const now = await employees(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace, status: 'terminated' }, { name: 1, termination: 1 }).lean();
  const byId = new Map(run.payslips.map((p) => [p.employee_id, p]));
  const overpaid = now.find((e) => {
    const p = byId.get(e._id)!;
    return e.termination && (e.termination.date < p.period.to || (e.termination.date === p.period.to && !p.settlement));
  });
  if (!overpaid) return;
  await transition(ctx, run._id, ['computed'], { status: 'void', voided_at: ctx.now, void_reason: `${overpaid.name}'s contract was ended while the run was computed.`, slot: `void:${run._id}` }).catch(() => undefined);
  throw new CuadraError('conflict', `${overpaid.name}'s contract was ended on ${overpaid.termination!.date} while this run was being computed; nothing was kept. Run the period again.`);
}

/** Computes the payroll of a period for every employee under contract in it. */
export const run = defineTool({
  name: 'payroll.run',
  description: 'Compute the payroll of a month, or of its first (1–15) or second (16–end) half, for every employee whose contract runs in the period (cut to the hire and termination dates), with their novelties: earnings, employee contributions and deductions, employer contributions, provisions, and the balanced journal entry posting will write. Contributions are as PILA declares them, per subsystem up to the next 100 pesos (Decreto 1990 de 2016); a second half completes the month\'s from the first half\'s, so the halves run in order. The payslip of a contract\'s last day carries its final settlement (employees.terminate), releasing the provisions posted runs hold for it. A period has at most one live run (void it to run again). exempt_114_1 (default true): the employer qualifies for the exemption of employer health, ICBF and SENA for employees under 10 minimum wages (ET art. 114-1).',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['month'],
    properties: {
      month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
      frequency: { enum: [...RUN_FREQUENCIES] },
      exempt_114_1: { type: 'boolean' },
    },
  } as const,
  output: {
    type: 'object', additionalProperties: false, required: ['run', 'payslips'],
    properties: { run: RUN_VIEW_SCHEMA, payslips: { type: 'array', items: PAYSLIP_VIEW_SCHEMA } },
  },
  async handler(input, ctx) {
    const frequency = input.frequency ?? 'monthly';
    const period = periodOf(input.month, frequency);
    const exempt = input.exempt_114_1 ?? true;
    // Runs of one month are computed one at a time, so a monthly run and a half-month run cannot overlap.
    return withLock(ctx.db, runLock(ctx.workspace, input.month), async () => {
      const own = await ownStoredRun(ctx);
      if (own) return answerRun(ctx, own);
      const live = await payrollRuns(ctx.db).find({ workspace: ctx.workspace, month: input.month, status: { $ne: 'void' } }, { period: 1, status: 1, frequency: 1 }).lean();
      const overlap = live.find((r) => r.period.from <= period.to && r.period.to >= period.from);
      if (overlap) throw new CuadraError('conflict', `A ${overlap.status} run ${overlap._id} already covers ${overlap.period.from}–${overlap.period.to}; void it to run the period again.`);
      // The second half completes the month's contributions from the first half's (calc.ts `earlier`): the halves run in order.
      const second = frequency === 'first_half' ? live.find((r) => r.frequency === 'second_half') : undefined;
      if (second) throw new CuadraError('conflict', `The second half of ${input.month} (run ${second._id}) is ${second.status}; it completes the month's contributions from the first half's, so void it before running the first half again.`);
      const firstHalf = frequency === 'second_half' ? live.find((r) => r.frequency === 'first_half') : undefined;
      const earlierSlips = firstHalf ? (await payrollRuns(ctx.db).findById(firstHalf._id, { payslips: 1 }).lean())?.payslips ?? [] : [];

      const staff = await employees(ctx.db).find({ workspace: ctx.workspace, hire_date: { $lte: period.to } }).limit(MAX_EMPLOYEES + 1).lean();
      if (staff.length > MAX_EMPLOYEES) throw new CuadraError('invalid_input', `A run computes at most ${MAX_EMPLOYEES} employees.`, { field: '/month' });
      const inPeriod = staff
        .filter((e) => e.salary.currency === 'COP' && e.contract_type !== 'service' && (!e.termination || e.termination.date >= period.from))
        .sort((a, b) => a.name.localeCompare(b.name) || (a._id < b._id ? -1 : 1));
      if (inPeriod.length === 0) throw new CuadraError('conflict', `No employee's contract runs in ${period.from}–${period.to}; there is nothing to compute.`);
      const allNovelties = await noveltiesIn(ctx.db, ctx.workspace, period.from, period.to);
      // A final settlement releases posted runs' provisions: computed and written under the lock
      // payroll.void takes to reverse a posted run, so none of them is voided in between.
      const settles = inPeriod.some((e) => e.termination && e.termination.date <= period.to);
      const compute = () => computeAndStore(ctx, { month: input.month, frequency, period, exempt, inPeriod, allNovelties, earlierSlips });
      return settles ? withLock(ctx.db, settlementLock(ctx.workspace), compute) : compute();
    });
  },
});
