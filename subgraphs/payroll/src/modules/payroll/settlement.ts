import { commercialDays, commercialWeight } from './calc.ts';
import { valueAt } from './parameters.ts';

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
 * - Indemnity for termination without just cause (CST art. 64) is not computed.
 */

/** What the settlement needs to know about one contract. */
export interface SettlementInput {
  hire_date: string;
  termination_date: string;
  /** Salary history, oldest first: from `from` on, the monthly salary is `amount`. */
  salaries: readonly { from: string; amount: number }[];
  /** Vacation days already taken (business days). */
  vacation_days_taken?: number;
}

export interface SettlementLine { concept: 'severance' | 'severance_interest' | 'service_bonus' | 'vacations'; amount: number; base: number; days: number }
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
  return { termination_date: end, lines, total: lines.reduce((s, l) => s + l.amount, 0) };
}
