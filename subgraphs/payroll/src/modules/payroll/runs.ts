import { addPositions, CuadraError, DATE_TIME_SCHEMA, type ToolContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { PayrollLine, PayrollResult } from './calc.ts';
import { SETTLEMENT_CONCEPTS, TERMINATION_REASONS, type SettlementConcept, type SettlementLine, type TerminationReason } from './settlement.ts';

/**
 * Payroll runs: `computed → approved → posted`, or `void` (a posted run with a reversing entry). A run holds, per
 * employee, the engine's result for the period (its payslip) and the balanced journal entry
 * posting will write. Each transition is one conditional update on the run's status.
 */

export const RUN_STATUSES = ['computed', 'approved', 'posted', 'void'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * The lock that serializes what changes a month's payroll: computing its runs, and ending a
 * contract on one of its days (employees.terminate), so a run never pays someone terminated meanwhile.
 */
export function runLock(workspace: string, month: string): string {
  return `payroll-run:${workspace}:${month}`;
}

/**
 * The lock between computing a final settlement (which releases posted runs' provisions) and
 * voiding a posted run (which reverses them): one per workspace, both rare.
 */
export function settlementLock(workspace: string): string {
  return `payroll-settlement:${workspace}`;
}

/** Monthly, or one half of a month (1–15, 16–end). */
export const RUN_FREQUENCIES = ['monthly', 'first_half', 'second_half'] as const;

/** One journal line, in the shape of the finance module's journal (invoices subgraph, books/journal.ts). */
export interface JournalLine { account: string; name: string; debit: number; credit: number; party_id: string | null }

/** One employee's payslip in a run. */
export interface Payslip {
  employee_id: string;
  name: string;
  document: { type: string; number: string };
  position: string;
  /** The employee's days in the run: the run's period cut to the contract. */
  period: { from: string; to: string };
  result: PayrollResult;
  /**
   * The final settlement, on the payslip whose period holds the contract's last day (absent on
   * others, and on runs computed before settlements reached the books).
   */
  settlement?: PayslipSettlement | null;
}

/**
 * A settlement line as the books take it: what is owed (`amount`), the part the provisions for it
 * already hold (`provisioned`, released from 2610xx) and the `difference` booked to the expense
 * (negative when more was provisioned than is owed). `provisioned + difference = amount`.
 */
export interface SettlementRelease extends SettlementLine { provisioned: number; difference: number }

/** The final settlement on the last payslip of a contract (release.ts). */
export interface PayslipSettlement {
  date: string;
  reason: TerminationReason;
  lines: SettlementRelease[];
  total: number;
  /** The posted runs whose provisions this settlement releases: none of them may be voided while it stands. */
  released_runs: string[];
}

/** What the employee is paid by this payslip: the period's net pay and the settlement, if any. */
export function payslipNet(p: Pick<Payslip, 'result' | 'settlement'>): number {
  return p.result.totals.net + (p.settlement?.total ?? 0);
}

/**
 * A run's totals. `net` is what the run pays out (the payslips' net pay and the settlements);
 * `settlement` is the settlements' part of it. Runs computed before settlements reached the books
 * have no `settlement`.
 */
export interface RunTotals { employees: number; earnings: number; employee_contributions: number; deductions: number; net: number; employer_contributions: number; provisions: number; settlement?: number }

export interface RunDoc {
  _id: string;
  workspace: string;
  frequency: (typeof RUN_FREQUENCIES)[number];
  /** YYYY-MM of the period. */
  month: string;
  period: { from: string; to: string };
  currency: 'COP';
  /**
   * The period while the run is live, `void:<id>` once voided: unique per workspace, so a period
   * has at most one live run however many calls race.
   */
  slot: string;
  status: RunStatus;
  exempt_114_1: boolean;
  payslips: Payslip[];
  totals: RunTotals;
  /** Every payslip's `settlement.released_runs`: what payroll.void checks before reversing a posted run. */
  released_runs?: string[];
  /**
   * The balanced entry posting writes, computed with the run: `je_<run id>`, dated the period's
   * last day. Kept in the run; once posted, the finance journal pulls it through the
   * `payroll_journal` source (journal_feed.ts; ARCHITECTURE.md, "Payroll postings").
   */
  journal_entry: { id: string; date: string; currency: string; memo: string; lines: JournalLine[] };
  approved_at: Date | null;
  posted_at: Date | null;
  voided_at: Date | null;
  void_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const runSchema = new Schema<RunDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    frequency: { type: String, required: true },
    month: { type: String, required: true },
    period: { type: Schema.Types.Mixed, required: true },
    currency: { type: String, required: true },
    slot: { type: String, required: true },
    status: { type: String, required: true },
    exempt_114_1: { type: Boolean, required: true },
    payslips: { type: Schema.Types.Mixed, required: true },
    released_runs: { type: [String], default: undefined },
    totals: { type: Schema.Types.Mixed, required: true },
    journal_entry: { type: Schema.Types.Mixed, required: true },
    approved_at: { type: Date, default: null },
    posted_at: { type: Date, default: null },
    voided_at: { type: Date, default: null },
    void_reason: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
runSchema.index({ workspace: 1, slot: 1 }, { unique: true });
runSchema.index({ workspace: 1, month: 1 });
addPositions(runSchema);

/** The runs collection (`payroll_runs`). */
export function payrollRuns(db: Connection): Model<RunDoc> {
  return (db.models.PayrollRun as Model<RunDoc> | undefined) ?? db.model<RunDoc>('PayrollRun', runSchema, 'payroll_runs');
}

/** The period of a month or one of its halves. */
export function periodOf(month: string, frequency: RunDoc['frequency']): { from: string; to: string } {
  const [y, m] = month.split('-').map(Number);
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  if (frequency === 'first_half') return { from: `${month}-01`, to: `${month}-15` };
  if (frequency === 'second_half') return { from: `${month}-16`, to: `${month}-${String(last).padStart(2, '0')}` };
  return { from: `${month}-01`, to: `${month}-${String(last).padStart(2, '0')}` };
}

/**
 * PUC accounts (Decreto 2650 de 1993, Plan Único de Cuentas para comerciantes) a payroll run
 * posts to: operating administrative expenses 5105xx, payroll withholdings and contributions
 * payable 2370xx, pension funds 238030, salaries payable 250505, provisions 2610xx; a final
 * settlement, the labour obligations of group 25 by concept (251010 cesantías consolidadas under
 * Ley 50 de 1990, 2515 intereses, 2520 prima, 2525 vacaciones consolidadas, 2540 indemnizaciones; the
 * sub-account codes under 2515–2540 are the ones charts commonly open, the decree fixing none, and
 * the finance journal opens them in the workspace's chart with these names).
 */
export const PAYROLL_ACCOUNTS = {
  salaries: { code: '510506', name: 'Sueldos' },
  overtime: { code: '510515', name: 'Horas extras y recargos' },
  commissions: { code: '510518', name: 'Comisiones' },
  sickLeave: { code: '510524', name: 'Incapacidades' },
  transport: { code: '510527', name: 'Auxilio de transporte' },
  severance: { code: '510530', name: 'Cesantías' },
  severanceInterest: { code: '510533', name: 'Intereses sobre cesantías' },
  serviceBonus: { code: '510536', name: 'Prima de servicios' },
  vacationsExpense: { code: '510539', name: 'Vacaciones' },
  bonuses: { code: '510548', name: 'Bonificaciones' },
  arl: { code: '510568', name: 'Aportes a administradoras de riesgos laborales, ARL' },
  health: { code: '510569', name: 'Aportes a entidades promotoras de salud, EPS' },
  pension: { code: '510570', name: 'Aportes a fondos de pensiones y/o cesantías' },
  familyFund: { code: '510572', name: 'Aportes cajas de compensación familiar' },
  icbf: { code: '510575', name: 'Aportes ICBF' },
  sena: { code: '510578', name: 'SENA' },
  /** The health fund's share of sick leave, advanced by the employer and recovered from the EPS. */
  sickLeaveReceivable: { code: '138095', name: 'Deudores varios — otros (incapacidades por cobrar a EPS)' },
  /** Loans to employees, repaid by payroll deduction. */
  employeeLoans: { code: '136525', name: 'Cuentas por cobrar a trabajadores — préstamos' },
  healthPayable: { code: '237005', name: 'Aportes a entidades promotoras de salud, EPS' },
  arlPayable: { code: '237006', name: 'Aportes a administradoras de riesgos laborales, ARL' },
  parafiscalPayable: { code: '237010', name: 'Aportes parafiscales (ICBF, SENA, cajas de compensación)' },
  garnishments: { code: '237025', name: 'Embargos judiciales' },
  otherDeductions: { code: '237095', name: 'Otras retenciones y aportes de nómina' },
  pensionPayable: { code: '238030', name: 'Fondos de cesantías y/o pensiones' },
  salariesPayable: { code: '250505', name: 'Salarios por pagar' },
  severanceProvision: { code: '261005', name: 'Cesantías' },
  severanceInterestProvision: { code: '261010', name: 'Intereses sobre cesantías' },
  vacationsProvision: { code: '261015', name: 'Vacaciones' },
  serviceBonusProvision: { code: '261020', name: 'Prima de servicios' },
  /** The final settlement (release.ts): the indemnity's expense, and what is owed to the worker by concept. */
  indemnity: { code: '510560', name: 'Indemnizaciones laborales' },
  severancePayable: { code: '251010', name: 'Ley 50 de 1990 y normas posteriores' },
  severanceInterestPayable: { code: '251505', name: 'Intereses sobre cesantías' },
  serviceBonusPayable: { code: '252005', name: 'Prima de servicios' },
  vacationsPayable: { code: '252505', name: 'Vacaciones consolidadas' },
  indemnityPayable: { code: '254005', name: 'Indemnizaciones laborales' },
} as const;

type Account = { code: string; name: string };

const earningAccount = (l: PayrollLine): Account => {
  if (l.concept === 'salary') return PAYROLL_ACCOUNTS.salaries;
  if (l.concept === 'transport_allowance') return PAYROLL_ACCOUNTS.transport;
  if (l.concept === 'commissions') return PAYROLL_ACCOUNTS.commissions;
  if (l.concept === 'bonus_salary' || l.concept === 'bonus_non_salary') return PAYROLL_ACCOUNTS.bonuses;
  // Vacations taken are paid out of their provision.
  if (l.concept === 'vacations') return PAYROLL_ACCOUNTS.vacationsProvision;
  if (l.concept === 'sick_leave') return l.payer === 'health_fund' ? PAYROLL_ACCOUNTS.sickLeaveReceivable : PAYROLL_ACCOUNTS.sickLeave;
  return PAYROLL_ACCOUNTS.overtime;
};

const EMPLOYER: Record<string, [Account, Account]> = {
  health: [PAYROLL_ACCOUNTS.health, PAYROLL_ACCOUNTS.healthPayable],
  pension: [PAYROLL_ACCOUNTS.pension, PAYROLL_ACCOUNTS.pensionPayable],
  // The approximation of the solidarity fund's declared figure (calc.ts): the fund is the pension administrator's.
  solidarity_fund: [PAYROLL_ACCOUNTS.pension, PAYROLL_ACCOUNTS.pensionPayable],
  arl: [PAYROLL_ACCOUNTS.arl, PAYROLL_ACCOUNTS.arlPayable],
  family_fund: [PAYROLL_ACCOUNTS.familyFund, PAYROLL_ACCOUNTS.parafiscalPayable],
  icbf: [PAYROLL_ACCOUNTS.icbf, PAYROLL_ACCOUNTS.parafiscalPayable],
  sena: [PAYROLL_ACCOUNTS.sena, PAYROLL_ACCOUNTS.parafiscalPayable],
};
/** A settlement concept's provision (released), expense (the difference) and payable (what is owed). */
const SETTLEMENT: Record<SettlementConcept, [Account | null, Account, Account]> = {
  severance: [PAYROLL_ACCOUNTS.severanceProvision, PAYROLL_ACCOUNTS.severance, PAYROLL_ACCOUNTS.severancePayable],
  severance_interest: [PAYROLL_ACCOUNTS.severanceInterestProvision, PAYROLL_ACCOUNTS.severanceInterest, PAYROLL_ACCOUNTS.severanceInterestPayable],
  service_bonus: [PAYROLL_ACCOUNTS.serviceBonusProvision, PAYROLL_ACCOUNTS.serviceBonus, PAYROLL_ACCOUNTS.serviceBonusPayable],
  vacations: [PAYROLL_ACCOUNTS.vacationsProvision, PAYROLL_ACCOUNTS.vacationsExpense, PAYROLL_ACCOUNTS.vacationsPayable],
  // Nothing is provisioned for an indemnity: it is all expense.
  indemnity: [null, PAYROLL_ACCOUNTS.indemnity, PAYROLL_ACCOUNTS.indemnityPayable],
};

const PROVISION: Record<string, [Account, Account]> = {
  severance: [PAYROLL_ACCOUNTS.severance, PAYROLL_ACCOUNTS.severanceProvision],
  severance_interest: [PAYROLL_ACCOUNTS.severanceInterest, PAYROLL_ACCOUNTS.severanceInterestProvision],
  service_bonus: [PAYROLL_ACCOUNTS.serviceBonus, PAYROLL_ACCOUNTS.serviceBonusProvision],
  vacations: [PAYROLL_ACCOUNTS.vacationsExpense, PAYROLL_ACCOUNTS.vacationsProvision],
};

/**
 * The run's journal entry: Dr the earnings (expense by concept), employer contributions and
 * provisions; Cr salaries payable (net pay), contributions payable (employee and employer
 * shares), deductions to whom they are owed, and the provisions. Σ debits = Σ credits because
 * net = earnings − employee contributions − deductions, line by line of each payslip.
 * A final settlement releases its provisions (Dr 2610xx `provisioned`), books the `difference` to
 * the expense (Dr, or Cr when more was provisioned than is owed) and credits what is owed to the
 * group-25 payable of its concept; it balances because provisioned + difference = amount.
 * Lines of one account and side are merged; the employee is not named on the lines (the payslips are).
 */
export function runEntryLines(payslips: readonly Payslip[]): JournalLine[] {
  const acc = new Map<string, JournalLine>();
  const put = (a: Account, signedDebit: number, signedCredit: number) => {
    // A negative amount goes to the other side: a second half giving back what the first half of
    // the month booked over the month's figure (calc.ts `earlier`), a release larger than what is owed.
    const debit = Math.max(signedDebit, 0) + Math.max(-signedCredit, 0);
    const credit = Math.max(signedCredit, 0) + Math.max(-signedDebit, 0);
    if (debit && credit) { put(a, debit, 0); put(a, 0, credit); return; }
    if (!debit && !credit) return;
    const key = `${a.code}:${debit ? 'd' : 'c'}`;
    const l = acc.get(key) ?? { account: a.code, name: a.name, debit: 0, credit: 0, party_id: null };
    l.debit += debit;
    l.credit += credit;
    acc.set(key, l);
  };
  for (const p of payslips) {
    const r = p.result;
    for (const l of r.earnings) put(earningAccount(l), l.amount, 0);
    for (const l of r.deductions) {
      const account = l.concept.startsWith('loan') ? PAYROLL_ACCOUNTS.employeeLoans : l.concept.startsWith('garnishment') ? PAYROLL_ACCOUNTS.garnishments : PAYROLL_ACCOUNTS.otherDeductions;
      put(account, 0, l.amount);
    }
    put(PAYROLL_ACCOUNTS.salariesPayable, 0, r.totals.net);
    if (r.pila) {
      // Each administrator is owed what PILA declares for it (the employee's share and the
      // employer's together, calc.ts); the employer's share is the expense.
      for (const l of r.pila) { const [expense, payable] = EMPLOYER[l.subsystem]; put(expense, l.employer, 0); put(payable, 0, l.amount); }
    } else {
      for (const l of r.employee_contributions) put(l.concept === 'health' ? PAYROLL_ACCOUNTS.healthPayable : PAYROLL_ACCOUNTS.pensionPayable, 0, l.amount);
      for (const l of r.employer_contributions) { const [dr, cr] = EMPLOYER[l.concept]; put(dr, l.amount, 0); put(cr, 0, l.amount); }
    }
    for (const l of r.provisions) { const [dr, cr] = PROVISION[l.concept]; put(dr, l.amount, 0); put(cr, 0, l.amount); }
    for (const l of p.settlement?.lines ?? []) {
      const [provision, expense, payable] = SETTLEMENT[l.concept];
      if (provision) put(provision, l.provisioned, 0);
      put(expense, l.difference, 0);
      put(payable, 0, l.amount);
    }
  }
  return [...acc.values()].sort((a, b) => (a.debit > 0 ? 0 : 1) - (b.debit > 0 ? 0 : 1) || a.account.localeCompare(b.account));
}

/** Every amount of one payslip's result, named: what CONTRACT §9 bounds. */
export function resultAmounts(r: PayrollResult): [string, number][] {
  const lines = [...r.earnings, ...r.employee_contributions, ...r.deductions, ...r.employer_contributions, ...r.provisions];
  return [
    ...lines.flatMap((l): [string, number][] => [[`${l.concept}`, l.amount], ...(l.base !== undefined ? [[`the base of ${l.concept}`, l.base] as [string, number]] : [])]),
    ...(r.pila ?? []).map((l): [string, number] => [`the declared ${l.subsystem} contribution`, l.amount]),
    ...Object.entries(r.ibc).map(([k, v]): [string, number] => [`the contribution base ${k}`, v]),
    ...Object.entries(r.totals).map(([k, v]): [string, number] => [`the total ${k}`, v]),
    // What the employee's lines debit in the run's entry.
    ['the cost to the employer (earnings, contributions and provisions)', r.totals.earnings + r.totals.employer_contributions + r.totals.provisions],
  ];
}

/** True when Σ debits = Σ credits, every amount a non-negative integer, no line on both sides. */
export function entryBalances(lines: readonly JournalLine[]): boolean {
  let d = 0;
  let c = 0;
  for (const l of lines) {
    if (l.debit < 0 || l.credit < 0 || (l.debit > 0 && l.credit > 0) || !Number.isInteger(l.debit) || !Number.isInteger(l.credit)) return false;
    d += l.debit;
    c += l.credit;
  }
  return d === c && d > 0;
}

/** The run `id` of the caller's workspace, or `not_found`. */
export async function loadRun(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<RunDoc> {
  const run = await payrollRuns(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!run) throw new CuadraError('not_found', `No payroll run ${id} exists in this workspace.`);
  return run;
}

/**
 * Moves a run from one of `from` to `to` in one conditional update (`extra` is set with it); a
 * run not in `from` is a `conflict` naming its status.
 */
export async function transition(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, id: string, from: readonly RunStatus[], set: Partial<RunDoc>, also: Record<string, unknown> = {}): Promise<RunDoc> {
  const moved = await payrollRuns(ctx.db).findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, status: { $in: [...from] }, ...also },
    { $set: { ...set, updated_at: ctx.now } },
    { returnDocument: 'after' },
  ).lean();
  if (moved) return moved;
  throw transitionRefused(await loadRun(ctx, id), from, set.status);
}

/** The refusal of moving `run` to `to` when it is not in one of `from` (as {@link transition} answers it). */
export function transitionRefused(run: RunDoc, from: readonly RunStatus[], to: RunStatus | undefined): CuadraError {
  return new CuadraError('conflict', `The payroll run of ${run.period.from}–${run.period.to} is ${run.status}; ${to === 'void' ? 'only a computed, approved or posted run is voided' : `only a ${from.join(' or ')} run becomes ${to}`}.`);
}

const LINE_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['concept', 'amount'],
  properties: {
    concept: { type: 'string' }, amount: { type: 'integer' }, base: { type: 'integer' }, rate_ppm: { type: 'integer' },
    date: { type: 'string' }, hours: { type: 'number' }, payer: { enum: ['employer', 'health_fund'] }, days: { type: 'integer' },
  },
} as const;
const LINES = { type: 'array', items: LINE_SCHEMA } as const;
/** JSON Schema of {@link PayslipSettlement}. */
export const PAYSLIP_SETTLEMENT_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['date', 'reason', 'lines', 'total', 'released_runs'],
  properties: {
    date: { type: 'string', format: 'date' },
    reason: { enum: [...TERMINATION_REASONS] },
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['concept', 'amount', 'base', 'days', 'provisioned', 'difference'],
        properties: {
          concept: { enum: [...SETTLEMENT_CONCEPTS] }, amount: { type: 'integer' }, base: { type: 'integer' }, days: { type: 'integer' }, note: { type: 'string' },
          provisioned: { type: 'integer' }, difference: { type: 'integer' },
        },
      },
    },
    total: { type: 'integer' },
    released_runs: { type: 'array', items: { type: 'string' } },
  },
} as const;

const PILA_LINE_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['subsystem', 'base', 'rate_ppm', 'amount', 'employee', 'employer', 'employee_rate_ppm', 'employer_rate_ppm'],
  properties: {
    subsystem: { enum: ['health', 'pension', 'solidarity_fund', 'arl', 'family_fund', 'icbf', 'sena'] },
    base: { type: 'integer' }, rate_ppm: { type: 'integer' }, amount: { type: 'integer' }, employee: { type: 'integer' }, employer: { type: 'integer' },
    employee_rate_ppm: { type: 'integer' }, employer_rate_ppm: { type: 'integer' },
  },
} as const;

/** JSON Schema of {@link payslipView}. */
export const PAYSLIP_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['run_id', 'run_status', 'employee_id', 'name', 'document', 'position', 'period', 'days_worked', 'sick_days', 'unpaid_days', 'vacation_days', 'earnings', 'ibc', 'employee_contributions', 'deductions', 'employer_contributions', 'pila', 'provisions', 'settlement', 'totals'],
  properties: {
    run_id: { type: 'string' },
    run_status: { enum: [...RUN_STATUSES] },
    employee_id: { type: 'string' },
    name: { type: 'string' },
    document: { type: 'object', additionalProperties: false, required: ['type', 'number'], properties: { type: { type: 'string' }, number: { type: 'string' } } },
    position: { type: 'string' },
    period: { type: 'object', additionalProperties: false, required: ['from', 'to', 'days'], properties: { from: { type: 'string' }, to: { type: 'string' }, days: { type: 'integer' } } },
    days_worked: { type: 'integer' }, sick_days: { type: 'integer' }, unpaid_days: { type: 'integer' }, vacation_days: { type: 'integer' },
    earnings: LINES,
    ibc: { type: 'object', additionalProperties: false, required: ['health_pension', 'arl', 'parafiscal'], properties: { health_pension: { type: 'integer' }, arl: { type: 'integer' }, parafiscal: { type: 'integer' } } },
    employee_contributions: LINES, deductions: LINES, employer_contributions: LINES, provisions: LINES,
    /** The contributions as PILA declares them (one line per subsystem; employee + employer = amount). */
    pila: { type: 'array', items: PILA_LINE_SCHEMA },
    /** The final settlement, on the payslip of the contract's last day; null on others. */
    settlement: { anyOf: [PAYSLIP_SETTLEMENT_SCHEMA, { type: 'null' }] },
    totals: {
      type: 'object', additionalProperties: false, required: ['earnings', 'employee_contributions', 'deductions', 'net', 'employer_contributions', 'provisions', 'settlement'],
      // net: what the payslip pays, the period's net pay plus the settlement.
      properties: { earnings: { type: 'integer' }, employee_contributions: { type: 'integer' }, deductions: { type: 'integer' }, net: { type: 'integer' }, employer_contributions: { type: 'integer' }, provisions: { type: 'integer' }, settlement: { type: 'integer' } },
    },
  },
} as const;

/** One payslip as payroll.run answers it and the `payslips` records source lists it. */
export function payslipView(run: Pick<RunDoc, '_id' | 'status'>, p: Payslip) {
  const r = p.result;
  return {
    run_id: run._id, run_status: run.status, employee_id: p.employee_id, name: p.name, document: p.document, position: p.position,
    period: r.period, days_worked: r.days_worked, sick_days: r.sick_days, unpaid_days: r.unpaid_days, vacation_days: r.vacation_days,
    earnings: r.earnings, ibc: r.ibc, employee_contributions: r.employee_contributions, deductions: r.deductions,
    employer_contributions: r.employer_contributions, pila: r.pila ?? [], provisions: r.provisions,
    settlement: p.settlement ?? null,
    totals: { ...r.totals, settlement: p.settlement?.total ?? 0, net: payslipNet(p) },
  };
}

const TOTALS_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['employees', 'earnings', 'employee_contributions', 'deductions', 'net', 'employer_contributions', 'provisions', 'settlement'],
  // net: what the run pays out, the payslips' net pay and the final settlements (`settlement`).
  properties: { employees: { type: 'integer' }, earnings: { type: 'integer' }, employee_contributions: { type: 'integer' }, deductions: { type: 'integer' }, net: { type: 'integer' }, employer_contributions: { type: 'integer' }, provisions: { type: 'integer' }, settlement: { type: 'integer' } },
} as const;

/** JSON Schema of {@link runView}. */
export const RUN_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'frequency', 'month', 'period', 'currency', 'status', 'exempt_114_1', 'totals', 'journal_entry', 'approved_at', 'posted_at', 'voided_at', 'void_reason', 'created_at'],
  properties: {
    id: { type: 'string' },
    frequency: { enum: [...RUN_FREQUENCIES] },
    month: { type: 'string' },
    period: { type: 'object', additionalProperties: false, required: ['from', 'to'], properties: { from: { type: 'string' }, to: { type: 'string' } } },
    currency: { type: 'string' },
    status: { enum: [...RUN_STATUSES] },
    exempt_114_1: { type: 'boolean' },
    totals: TOTALS_SCHEMA,
    journal_entry: {
      type: 'object', additionalProperties: false, required: ['id', 'date', 'currency', 'memo', 'lines', 'total_debit', 'total_credit', 'posted'],
      properties: {
        id: { type: 'string' }, date: { type: 'string' }, currency: { type: 'string' }, memo: { type: 'string' },
        lines: {
          type: 'array',
          items: {
            type: 'object', additionalProperties: false, required: ['account', 'name', 'debit', 'credit', 'party_id'],
            properties: { account: { type: 'string' }, name: { type: 'string' }, debit: { type: 'integer' }, credit: { type: 'integer' }, party_id: { type: ['string', 'null'] } },
          },
        },
        total_debit: { type: 'integer' }, total_credit: { type: 'integer' },
        posted: { type: 'boolean' },
      },
    },
    approved_at: { type: ['string', 'null'] },
    posted_at: { type: ['string', 'null'] },
    voided_at: { type: ['string', 'null'] },
    void_reason: { type: ['string', 'null'] },
    created_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of a run (payslips are read through the `payslips` source or payroll.run's answer). */
export function runView(r: RunDoc) {
  const e = r.journal_entry;
  return {
    id: r._id, frequency: r.frequency, month: r.month, period: r.period, currency: r.currency, status: r.status, exempt_114_1: r.exempt_114_1, totals: { ...r.totals, settlement: r.totals.settlement ?? 0 },
    journal_entry: { ...e, total_debit: e.lines.reduce((s, l) => s + l.debit, 0), total_credit: e.lines.reduce((s, l) => s + l.credit, 0), posted: r.status === 'posted' },
    approved_at: r.approved_at?.toISOString() ?? null, posted_at: r.posted_at?.toISOString() ?? null, voided_at: r.voided_at?.toISOString() ?? null,
    void_reason: r.void_reason, created_at: r.created_at.toISOString(),
  };
}
