import { commercialDays, commercialWeight } from './calc.ts';
import { valueAt } from './parameters.ts';

/** Why a contract ended (CST arts. 61–62); `constructive_dismissal` is the worker leaving for the employer's just cause (art. 62 lit. B). */
export const TERMINATION_REASONS = ['resignation', 'just_cause', 'without_just_cause', 'constructive_dismissal', 'mutual_agreement', 'end_of_term', 'other'] as const;
export type TerminationReason = (typeof TERMINATION_REASONS)[number];

/** The reasons that owe the indemnity of CST art. 64. */
export const INDEMNIFIED_REASONS: readonly TerminationReason[] = ['without_just_cause', 'constructive_dismissal'];

/** The day Ley 789 de 2002 took effect (its publication): ten years of service by then keep the older table. */
const LEY_789_IN_FORCE = '2002-12-27';

/**
 * The final settlement (liquidación definitiva) owed when a contract ends, as a pure function:
 * severance (CST art. 249), its interest (Ley 52 de 1975), the service bonus of the running
 * semester (CST art. 306) and the vacations earned and not taken (CST arts. 186, 189).
 * Money in integer minor units of COP; the commercial year of 360 days (calc.ts conventions).
 *
 * What it assumes, written once:
 * - Severance and its interest count from 1 January of the termination year (or the hire date,
 *   if later): earlier years were consigned to the severance fund by 14 February (Ley 50 de
 *   1990 art. 99) and their interest paid by 31 January.
 * - The service bonus counts from the start of the running semester (1 January or 1 July) or the
 *   hire date: the previous half was paid on its date (30 June / 20 December).
 * - The base of severance and the bonus is the monthly salary at termination plus the transport
 *   allowance when the salary entitles to it; when the salary changed in the last three months,
 *   the average salary of the counted days (CST art. 253). Variable pay is not averaged in here.
 * - Vacations: 15 working days per 360 days served since hire (salary × days / 720), less the
 *   days already taken, valued at the salary at termination (CST art. 192).
 * - The indemnity for dismissal without just cause (or the worker's leaving for the employer's
 *   just cause), CST art. 64 as modified by Ley 789 de 2002 art. 28, on the monthly salary at
 *   termination, a day being a 30th of it:
 *   - fixed term: the salaries of the time left of the agreed term (commercial days from the day
 *     after the last to the term's end), never under 15 days (the article's 15-day floor, which
 *     MinProtección reads as binding every fixed-term contract, not only those for a piece of work);
 *   - indefinite, salary under 10 SMMLV: 30 days for the first year of service, plus 20 for each
 *     further year and proportionally for a fraction; 10 SMMLV or more: 20, plus 15;
 *   - workers with ten or more years of continuous service on 27 Dec 2002 (the law's start): the
 *     table of Ley 50 de 1990 art. 6 lit. d (the article's transitional paragraph), 45 days plus 40
 *     for each further year. (Those with ten years on 1 Jan 1991 could keep Decreto-Ley 2351 de
 *     1965 art. 8 num. 5 — reinstatement, a judge's matter — which is not computed here.)
 *   Years of service are commercial (360 days), as for severance. Apprenticeships (not a labour
 *   contract, Ley 789 art. 30) and contracts for services owe none.
 */

/** What the settlement needs to know about one contract. */
export interface SettlementInput {
  hire_date: string;
  termination_date: string;
  /** Salary history, oldest first: from `from` on, the monthly salary is `amount`. */
  salaries: readonly { from: string; amount: number }[];
  /** Vacation days already taken (business days). */
  vacation_days_taken?: number;
  /** Why it ended; the indemnity is owed for {@link INDEMNIFIED_REASONS} only. */
  reason?: TerminationReason;
  contract_type?: 'indefinite' | 'fixed_term' | 'apprenticeship' | 'service';
  /** A fixed-term contract's agreed last day (of the term running at termination). */
  term_end?: string | null;
}

/**
 * One line of the settlement. `days`: the days counted (of the year, the semester, the service; for
 * the indemnity, the days of service, or of the term left). `note` says how the indemnity was reckoned.
 */
export interface SettlementLine { concept: SettlementConcept; amount: number; base: number; days: number; note?: string }
export const SETTLEMENT_CONCEPTS = ['severance', 'severance_interest', 'service_bonus', 'vacations', 'indemnity'] as const;
export type SettlementConcept = (typeof SETTLEMENT_CONCEPTS)[number];

/** A settlement the law does not let us compute from what is recorded (say why; the caller refuses). */
export class SettlementNotComputable extends Error {}
export interface Settlement { termination_date: string; lines: SettlementLine[]; total: number }

type Q = { n: bigint; d: bigint };
const half = (x: Q) => Number((2n * x.n + x.d) / (2n * x.d));

function salaryOn(salaries: SettlementInput['salaries'], date: string): number {
  let s = salaries[0]?.amount ?? 0;
  for (const c of salaries) if (c.from <= date) s = c.amount;
  return s;
}

function addDays(date: string, n: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** The average monthly salary over the commercial days from `from` to `to` (exact fraction). */
function averageSalary(salaries: SettlementInput['salaries'], from: string, to: string): Q {
  let n = 0n;
  let days = 0n;
  for (let d = from; d <= to; d = addDays(d, 1)) {
    const w = BigInt(commercialWeight(d));
    n += BigInt(salaryOn(salaries, d)) * w;
    days += w;
  }
  return days === 0n ? { n: 0n, d: 1n } : { n, d: days };
}

/** The final settlement of a contract ending on `termination_date` (see the module comment). */
export function finalSettlement(input: SettlementInput): Settlement {
  const end = input.termination_date;
  if (end < input.hire_date) throw new RangeError('The contract ends before it starts.');
  const year = end.slice(0, 4);
  const laterOf = (a: string, b: string) => (a > b ? a : b);
  const yearStart = laterOf(`${year}-01-01`, input.hire_date);
  const semesterStart = laterOf(end.slice(5) >= '07-01' ? `${year}-07-01` : `${year}-01-01`, input.hire_date);

  const current = salaryOn(input.salaries, end);
  const threeMonthsBefore = addDays(end, -90);
  const changedLately = input.salaries.some((s) => s.from > threeMonthsBefore && s.from <= end && s.from > input.hire_date);
  const salary: Q = changedLately ? averageSalary(input.salaries, yearStart, end) : { n: BigInt(current), d: 1n };
  const transport = current <= valueAt('minimum_wage', end) * valueAt('transport_allowance_cap', end) ? valueAt('transport_allowance', end) : 0;
  const base: Q = { n: salary.n + BigInt(transport) * salary.d, d: salary.d };

  const severanceDays = commercialDays(yearStart, end);
  const bonusDays = commercialDays(semesterStart, end);
  const servedDays = commercialDays(input.hire_date, end);
  const severance: Q = { n: base.n * BigInt(severanceDays), d: base.d * 360n };
  // Ley 52 de 1975: 12 % a year of the severance, for the days it covers.
  const interest: Q = { n: severance.n * BigInt(valueAt('severance_interest', end)) * BigInt(severanceDays), d: severance.d * 1_000_000n * 360n };
  const bonus: Q = { n: base.n * BigInt(bonusDays), d: base.d * 360n };
  // 15 working days a year = half a month per 360 days; days already taken come off at a 30th of the salary each.
  const owedHalfDays = BigInt(servedDays) - BigInt(input.vacation_days_taken ?? 0) * 24n;
  const vacations: Q = owedHalfDays > 0n ? { n: BigInt(current) * owedHalfDays, d: 720n } : { n: 0n, d: 1n };

  const lines: SettlementLine[] = [
    { concept: 'severance', amount: half(severance), base: half(base), days: severanceDays },
    { concept: 'severance_interest', amount: half(interest), base: half(severance), days: severanceDays },
    { concept: 'service_bonus', amount: half(bonus), base: half(base), days: bonusDays },
    { concept: 'vacations', amount: half(vacations), base: current, days: servedDays },
  ];
  const indemnity = dismissalIndemnity(input, current, servedDays);
  if (indemnity) lines.push(indemnity);
  return { termination_date: end, lines, total: lines.reduce((s, l) => s + l.amount, 0) };
}

/** A count of days with two decimals, as a Colombian reads it: 44,17. */
const daysText = (d: Q) => (Number((d.n * 200n + d.d) / (2n * d.d)) / 100).toFixed(2).replace('.', ',');

/**
 * The indemnity of CST art. 64 (see the module comment), or null when none is owed. Exact: the
 * days of salary are a fraction, the amount salary × days / 30 is rounded once, half up.
 */
export function dismissalIndemnity(input: SettlementInput, salary: number, servedDays: number): SettlementLine | null {
  if (!input.reason || !INDEMNIFIED_REASONS.includes(input.reason)) return null;
  const end = input.termination_date;
  const amountFor = (days: Q) => half({ n: BigInt(salary) * days.n, d: 30n * days.d });
  if (input.contract_type === 'fixed_term') {
    if (!input.term_end) throw new SettlementNotComputable('The fixed term\'s agreed end is not recorded, so the salaries of the time left of it cannot be reckoned.');
    if (input.term_end < end) throw new SettlementNotComputable(`The recorded term ended on ${input.term_end}, before the last day ${end}: record the end of the term that was running (a renewal).`);
    const left = input.term_end > end ? commercialDays(addDays(end, 1), input.term_end) : 0;
    const floor = valueAt('dismissal_fixed_term_minimum_days', end);
    const days = Math.max(left, floor);
    return {
      concept: 'indemnity', amount: amountFor({ n: BigInt(days), d: 1n }), base: salary, days: left,
      note: left >= floor
        ? `CST art. 64: salarios de los ${left} días que faltaban del plazo (hasta el ${input.term_end})`
        : `CST art. 64: faltaban ${left} días del plazo (hasta el ${input.term_end}); mínimo ${floor} días de salario`,
    };
  }
  if (input.contract_type !== 'indefinite') return null;
  const further = BigInt(Math.max(servedDays - 360, 0));
  let first: number;
  let perYear: number;
  let rule: string;
  if (yearsBetween(input.hire_date, LEY_789_IN_FORCE) >= 10) {
    // Ley 789 art. 28, parágrafo transitorio: Ley 50 de 1990 art. 6 lit. d.
    [first, perYear, rule] = [45, 40, 'Ley 50 de 1990 art. 6 lit. d (Ley 789 de 2002 art. 28, parágrafo transitorio)'];
  } else if (salary >= valueAt('minimum_wage', end) * valueAt('dismissal_high_wage_from', end)) {
    [first, perYear, rule] = [valueAt('dismissal_high_wage_first_year_days', end), valueAt('dismissal_high_wage_further_year_days', end), 'CST art. 64 lit. b (10 SMMLV o más)'];
  } else {
    [first, perYear, rule] = [valueAt('dismissal_first_year_days', end), valueAt('dismissal_further_year_days', end), 'CST art. 64 lit. a (menos de 10 SMMLV)'];
  }
  // first + perYear × further / 360 days of salary.
  const days: Q = { n: BigInt(first) * 360n + BigInt(perYear) * further, d: 360n };
  return {
    concept: 'indemnity', amount: amountFor(days), base: salary, days: servedDays,
    note: further > 0n
      ? `${rule}: ${first} días por el primer año + ${perYear} × ${further}/360 por el tiempo siguiente = ${daysText(days)} días de salario`
      : `${rule}: ${first} días de salario (un año de servicio o menos)`,
  };
}

/** Whole years from `from` to `to` (calendar dates). */
function yearsBetween(from: string, to: string): number {
  const [fy, fm, fd] = from.split('-').map(Number);
  const [ty, tm, td] = to.split('-').map(Number);
  return ty - fy - (tm < fm || (tm === fm && td < fd) ? 1 : 0);
}
