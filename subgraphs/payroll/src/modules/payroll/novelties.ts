import { addPositions, CuadraError, DATE_TIME_SCHEMA, type ToolContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { HOUR_KINDS, type HourKind, type PayrollInput } from './calc.ts';
import { payrollRuns } from './runs.ts';

/**
 * Payroll novelties (novedades de nómina, DOMAIN.md): the facts of a period the run needs beyond
 * the contract — hours, absences, variable pay and deductions — each captured with its dates
 * before the run, per employee. A run reads the novelties whose dates fall in its period.
 */

/** The novelty types (the `kind` of a `payroll_novelties` row). */
export const NOVELTY_TYPES = ['overtime', 'sick_leave', 'leave', 'vacations', 'commission', 'bonus', 'loan', 'deduction', 'garnishment'] as const;
export type NoveltyType = (typeof NOVELTY_TYPES)[number];

/** Types that cover a run of days (`from`–`to`); the others fall on one `date`. */
export const ABSENCE_TYPES: readonly NoveltyType[] = ['sick_leave', 'leave', 'vacations'];
/** Types that carry an amount. */
export const AMOUNT_TYPES: readonly NoveltyType[] = ['commission', 'bonus', 'loan', 'deduction', 'garnishment'];

/** A novelty as stored. */
export interface NoveltyDoc {
  _id: string;
  workspace: string;
  employee_id: string;
  /** Kept for the records source's search and rows (the employee's name when captured). */
  employee_name: string;
  type: NoveltyType;
  /** For overtime: which hours (surcharge or overtime, day or night, rest day or not). */
  hour_kind: HourKind | null;
  /** First day (the only day, for one-day novelties), YYYY-MM-DD. */
  date: string;
  /** Last day; equal to `date` for one-day novelties. */
  end_date: string;
  hours: number | null;
  /** Integer minor units of the employee's currency. */
  amount: number | null;
  /** Leave: paid (salary continues) or unpaid (contract suspended). Bonus: salary-type (CST 127) or not (CST 128). */
  paid: boolean | null;
  salary_type: boolean | null;
  /** Vacations: business days taken (the settlement counts them); sick leave: days of the same leave in earlier periods. */
  days: number | null;
  label: string | null;
  created_at: Date;
}

const noveltySchema = new Schema<NoveltyDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    employee_id: { type: String, required: true },
    employee_name: { type: String, required: true },
    type: { type: String, required: true },
    hour_kind: { type: String, default: null },
    date: { type: String, required: true },
    end_date: { type: String, required: true },
    hours: { type: Number, default: null },
    amount: { type: Number, default: null },
    paid: { type: Boolean, default: null },
    salary_type: { type: Boolean, default: null },
    days: { type: Number, default: null },
    label: { type: String, default: null },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
// A run reads the novelties of its period (dates are text, so a range on `date` is a range of days).
noveltySchema.index({ workspace: 1, date: 1 });
noveltySchema.index({ workspace: 1, employee_id: 1 });
addPositions(noveltySchema);

/** The novelties collection (`payroll_novelties`). */
export function novelties(db: Connection): Model<NoveltyDoc> {
  return (db.models.PayrollNovelty as Model<NoveltyDoc> | undefined) ?? db.model<NoveltyDoc>('PayrollNovelty', noveltySchema, 'payroll_novelties');
}

/** JSON Schema of {@link noveltyView}. */
export const NOVELTY_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'employee_id', 'employee_name', 'type', 'hour_kind', 'from', 'to', 'hours', 'amount', 'paid', 'salary_type', 'days', 'label', 'created_at'],
  properties: {
    id: { type: 'string' },
    employee_id: { type: 'string' },
    employee_name: { type: 'string' },
    type: { enum: [...NOVELTY_TYPES] },
    hour_kind: { enum: [...HOUR_KINDS, null] },
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    hours: { type: ['number', 'null'] },
    amount: { type: ['integer', 'null'] },
    paid: { type: ['boolean', 'null'] },
    salary_type: { type: ['boolean', 'null'] },
    days: { type: ['integer', 'null'] },
    label: { type: ['string', 'null'] },
    created_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of a novelty. */
export function noveltyView(n: NoveltyDoc) {
  return {
    id: n._id, employee_id: n.employee_id, employee_name: n.employee_name, type: n.type, hour_kind: n.hour_kind,
    from: n.date, to: n.end_date, hours: n.hours, amount: n.amount, paid: n.paid, salary_type: n.salary_type, days: n.days,
    label: n.label, created_at: n.created_at.toISOString(),
  };
}

/** Whether a novelty matches a lower-cased search term: the employee's name or the label. */
export function noveltyMatches(n: NoveltyDoc, needle: string): boolean {
  return n.employee_name.toLowerCase().includes(needle) || (n.label ?? '').toLowerCase().includes(needle);
}

/** The novelties of the workspace with a day in `from`–`to`, oldest first. */
export async function noveltiesIn(db: Connection, workspace: string, from: string, to: string, employeeId?: string): Promise<NoveltyDoc[]> {
  // An absence may start before the period; none is longer than a year (the tool's bound).
  const earliest = shiftDays(from, -366);
  const rows = await novelties(db).find({ workspace, date: { $gte: earliest, $lte: to }, ...(employeeId ? { employee_id: employeeId } : {}) }).lean();
  return rows.filter((n) => n.end_date >= from).sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a._id < b._id ? -1 : 1));
}

/** The first novelty of an employee that falls after `date`, if any. */
export async function firstNoveltyAfter(ctx: Pick<ToolContext, 'db' | 'workspace'>, employeeId: string, date: string): Promise<NoveltyDoc | null> {
  const rows = await novelties(ctx.db).find({ workspace: ctx.workspace, employee_id: employeeId }).lean();
  return rows.filter((n) => n.end_date > date).sort((a, b) => (a.end_date < b.end_date ? -1 : 1))[0] ?? null;
}

/** Business days of vacation an employee has taken up to `date` (the settlement deducts them). */
export async function vacationDaysTaken(ctx: Pick<ToolContext, 'db' | 'workspace'>, employeeId: string, date: string): Promise<number> {
  const rows = await novelties(ctx.db).find({ workspace: ctx.workspace, employee_id: employeeId, type: 'vacations' }).lean();
  return rows.filter((n) => n.date <= date).reduce((s, n) => s + (n.days ?? 0), 0);
}

export function shiftDays(date: string, n: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

function daysFrom(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

/**
 * The engine's input facts of one employee's novelties inside the period `from`–`to` (already
 * clipped to the contract): absences are cut to the period, a sick leave keeps the count of its
 * days before the period (the employer pays the first days, the health fund the rest).
 */
export function engineFacts(rows: readonly NoveltyDoc[], from: string, to: string): Pick<PayrollInput, 'hours' | 'sick_leave' | 'unpaid_leave' | 'vacations' | 'commissions' | 'bonus_salary' | 'bonus_non_salary' | 'deductions'> {
  const hours: NonNullable<PayrollInput['hours']>[number][] = [];
  const sick: { start: string; days: number; prior_days?: number }[] = [];
  const unpaid: { start: string; days: number }[] = [];
  const vacations: { start: string; days: number }[] = [];
  const deductions: { kind: 'loan' | 'garnishment' | 'other'; amount: number; label?: string }[] = [];
  let commissions = 0;
  let bonusSalary = 0;
  let bonusNonSalary = 0;
  for (const n of rows) {
    const start = n.date > from ? n.date : from;
    const end = n.end_date < to ? n.end_date : to;
    if (end < start) continue;
    const days = daysFrom(start, end) + 1;
    switch (n.type) {
      case 'overtime': hours.push({ kind: n.hour_kind!, date: n.date, hours: n.hours! }); break;
      case 'sick_leave': sick.push({ start, days, prior_days: (n.days ?? 0) + daysFrom(n.date, start) }); break;
      case 'leave': if (!n.paid) unpaid.push({ start, days }); break;
      case 'vacations': vacations.push({ start, days }); break;
      case 'commission': commissions += n.amount!; break;
      case 'bonus': if (n.salary_type) bonusSalary += n.amount!; else bonusNonSalary += n.amount!; break;
      case 'loan': deductions.push({ kind: 'loan', amount: n.amount!, ...(n.label ? { label: n.label } : {}) }); break;
      case 'garnishment': deductions.push({ kind: 'garnishment', amount: n.amount!, ...(n.label ? { label: n.label } : {}) }); break;
      case 'deduction': deductions.push({ kind: 'other', amount: n.amount!, ...(n.label ? { label: n.label } : {}) }); break;
    }
  }
  return {
    ...(hours.length ? { hours } : {}), ...(sick.length ? { sick_leave: sick } : {}), ...(unpaid.length ? { unpaid_leave: unpaid } : {}),
    ...(vacations.length ? { vacations } : {}), ...(commissions ? { commissions } : {}), ...(bonusSalary ? { bonus_salary: bonusSalary } : {}),
    ...(bonusNonSalary ? { bonus_non_salary: bonusNonSalary } : {}), ...(deductions.length ? { deductions } : {}),
  };
}

/** Refuses a change to novelties on a date a run already approved or posted covers. */
export async function assertPeriodOpen(db: Connection, workspace: string, from: string, to: string): Promise<void> {
  const closed = await payrollRuns(db).find({ workspace, status: { $in: ['approved', 'posted'] } }, { period: 1, status: 1 }).lean();
  const hit = closed.find((r) => r.period.from <= to && r.period.to >= from);
  if (hit) throw new CuadraError('conflict', `The payroll of ${hit.period.from}–${hit.period.to} is ${hit.status}; its novelties are closed (void the run first, if it is not posted).`);
}
