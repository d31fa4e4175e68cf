import { valueAt, type ParameterKey } from './parameters.ts';

/**
 * The payroll of one employee for one period, as pure functions over the parameters table
 * (parameters.ts). Money is integer minor units of COP (CONTRACT §3); rates are ppm.
 *
 * Conventions, each written once here:
 * - **Commercial month**: every month counts 30 days. Day 31 weighs 0; the last day of February
 *   weighs what is left to 30 (3 in a common year, 2 in a leap year). A period's `days` is the sum
 *   of its dates' weights, so 1–31 March and 1–28 February are both 30 days, 1–15 is 15.
 * - **By date**: every figure is read on the date it concerns — an hour novelty on its date, a
 *   day-prorated amount (salary floor, transport allowance) day by day — so a period spanning a
 *   change (the Sunday surcharge on 1 July, the hour divisor on 15 July) uses each value for its
 *   own days or hours.
 * - **Rounding**: arithmetic is exact (BigInt fractions). Each earnings, deduction and provision
 *   line is rounded once, half up, to the minor unit; the hour value is never rounded on its own.
 *   The contribution bases (IBC) are rounded UP to the whole peso and each subsystem's declared
 *   contribution UP to the next 100 pesos (Decreto 1990 de 2016; parameters `ibc_rounding` and
 *   `contribution_rounding`); the employee's share is theirs half up to the peso, the employer's
 *   the rest (see the contributions below).
 */

/** Hour novelties: surcharges on ordinary hours and overtime (CST arts. 168, 179). */
export const HOUR_KINDS = [
  'night', 'sunday_holiday', 'sunday_holiday_night',
  'overtime_day', 'overtime_night', 'overtime_day_sunday_holiday', 'overtime_night_sunday_holiday',
] as const;
export type HourKind = (typeof HOUR_KINDS)[number];

/** One period's facts for one employee. */
export interface PayrollInput {
  /** First and last day of the period (a month, a half month, or any run of days). */
  period: { from: string; to: string };
  /** Monthly salary, minor units (the salary on the period's first day when `salary_changes` is given). */
  salary: number;
  /**
   * Salary changes inside the period: from `from` on, the monthly salary is `salary`. Each day is
   * paid — and each hour valued — at the salary of its own date.
   */
  salary_changes?: readonly { from: string; salary: number }[];
  /** ARL risk class, I–V. */
  arl_class: 1 | 2 | 3 | 4 | 5;
  /** The employer qualifies for the exemption of Estatuto Tributario art. 114-1 (an income-tax filer). */
  exempt_114_1?: boolean;
  /** Hours on a date, by kind; hours in hundredths at most. */
  hours?: readonly { kind: HourKind; date: string; hours: number }[];
  /** Sick leave (general illness) days falling in the period: from `start`, `days` calendar days; `prior_days` of the same leave were in earlier periods. */
  sick_leave?: readonly { start: string; days: number; prior_days?: number }[];
  /** Unpaid leave (licencia no remunerada, CST art. 51 num. 4): not paid, no transport allowance, and not counted as time served. */
  unpaid_leave?: readonly { start: string; days: number }[];
  /** Vacation days taken (CST art. 186): paid at the salary of each day, from the vacation provision; no transport allowance. */
  vacations?: readonly { start: string; days: number }[];
  /** Salary-type variable pay (CST art. 127). */
  commissions?: number;
  bonus_salary?: number;
  /** Non-salary payments (CST art. 128): outside the IBC up to 40 % of total remuneration (Ley 1393 art. 30). */
  bonus_non_salary?: number;
  /** Loans, garnishments and other deductions from the net pay. */
  deductions?: readonly { kind: 'loan' | 'garnishment' | 'other'; amount: number; label?: string }[];
  /**
   * The payslip of the same month's earlier days, already computed (the first half, when this is
   * the second): PILA declares a month, so the contribution bases and declared figures are the
   * whole month's, and this period books the month's less what the earlier one booked.
   */
  earlier?: Pick<PayrollResult, 'period' | 'unpaid_days' | 'days_worked' | 'earnings' | 'ibc' | 'pila'>;
}

/** One line of a payslip or of the employer's cost. */
export interface PayrollLine {
  concept: string;
  amount: number;
  /** What the rate applies to, for a contribution or provision. */
  base?: number;
  rate_ppm?: number;
  /** For an hour novelty. */
  date?: string;
  hours?: number;
  /** Who bears a sick-leave line. */
  payer?: 'employer' | 'health_fund';
  days?: number;
}

/**
 * One subsystem's contribution as the PILA (Planilla Integrada de Liquidación de Aportes)
 * declares it: the base, the rates, the declared amount (rounded up to the parameter
 * `contribution_rounding`), and who bears it. `employee + employer = amount`.
 */
export interface PilaLine {
  subsystem: 'health' | 'pension' | 'solidarity_fund' | 'arl' | 'family_fund' | 'icbf' | 'sena';
  base: number;
  /** The subsystem's whole rate on the base (employee's and employer's), ppm. */
  rate_ppm: number;
  /** What PILA declares and pays the administrator. */
  amount: number;
  /** Withheld from the employee: their rate on the base, half up to the peso. */
  employee: number;
  /** Borne by the employer: the rest of the declared amount (its rate, and the approximation). */
  employer: number;
  employee_rate_ppm: number;
  employer_rate_ppm: number;
}

/** The payroll of one employee for one period. */
export interface PayrollResult {
  period: { from: string; to: string; days: number };
  days_worked: number;
  sick_days: number;
  unpaid_days: number;
  vacation_days: number;
  earnings: PayrollLine[];
  /** Contribution bases: health and pension; occupational risk; family fund, ICBF and SENA. */
  ibc: { health_pension: number; arl: number; parafiscal: number };
  /** Whether the employer's health, ICBF and SENA were exempt (ET art. 114-1). */
  exempt_114_1: boolean;
  employee_contributions: PayrollLine[];
  deductions: PayrollLine[];
  employer_contributions: PayrollLine[];
  /** The contributions as PILA declares them, one line per subsystem. */
  pila: PilaLine[];
  provisions: PayrollLine[];
  totals: { earnings: number; employee_contributions: number; deductions: number; net: number; employer_contributions: number; provisions: number };
}

/** An exact non-negative fraction. */
type Q = { n: bigint; d: bigint };
const q = (n: number | bigint, d: number | bigint = 1n): Q => ({ n: BigInt(n), d: BigInt(d) });
const add = (a: Q, b: Q): Q => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });
const mul = (a: Q, b: Q): Q => ({ n: a.n * b.n, d: a.d * b.d });
const PPM = 1_000_000n;

/** Half up to the integer (values here are never negative). */
function roundHalfUp(x: Q): number {
  return Number((2n * x.n + x.d) / (2n * x.d));
}
/** Half up to a multiple of `unit` minor units. */
function roundHalfUpTo(x: Q, unit: number): number {
  return roundHalfUp({ n: x.n, d: x.d * BigInt(unit) }) * unit;
}
/** Up to a multiple of `unit` minor units. */
function ceilTo(x: Q, unit: number): number {
  const u = BigInt(unit);
  return Number(((x.n + x.d * u - 1n) / (x.d * u)) * u);
}
const cmp = (a: Q, b: Q): number => { const l = a.n * b.d; const r = b.n * a.d; return l < r ? -1 : l > r ? 1 : 0; };
const max = (a: Q, b: Q): Q => (cmp(a, b) >= 0 ? a : b);
const min = (a: Q, b: Q): Q => (cmp(a, b) <= 0 ? a : b);

function parseDate(date: string): Date {
  return new Date(`${date}T00:00:00Z`);
}
function iso(d: Date): string {
  return d.toISOString().slice(0, 10);
}
function addDays(date: string, n: number): string {
  const d = parseDate(date);
  d.setUTCDate(d.getUTCDate() + n);
  return iso(d);
}

/** The commercial weight of a date: 0 for a 31st, the rest of 30 for the last day of February, else 1. */
export function commercialWeight(date: string): number {
  const d = parseDate(date);
  const day = d.getUTCDate();
  if (day === 31) return 0;
  if (d.getUTCMonth() === 1 && addDays(date, 1).slice(8) === '01') return 31 - day;
  return 1;
}

/** Every date from `from` to `to`, inclusive. */
function datesOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}

/** Commercial days of a run of dates (30 for any whole month). */
export function commercialDays(from: string, to: string): number {
  return datesOf(from, to).reduce((s, d) => s + commercialWeight(d), 0);
}

/** Σ over the dates of (monthly value on that date × weight) / 30: a monthly figure prorated day by day. */
function prorated(dates: readonly string[], monthly: (date: string) => number): Q {
  let acc = q(0);
  for (const d of dates) {
    const w = commercialWeight(d);
    if (w) acc = add(acc, q(BigInt(monthly(d)) * BigInt(w), 30));
  }
  return acc;
}

/** The day-weighted average of a rate over the period's dates (constant rates give themselves). */
function rateOver(key: ParameterKey, dates: readonly string[], days: number): Q {
  let acc = q(0);
  for (const d of dates) {
    const w = commercialWeight(d);
    if (w) acc = add(acc, q(BigInt(valueAt(key, d)) * BigInt(w)));
  }
  return { n: acc.n, d: acc.d * BigInt(days) * PPM };
}

/** The surcharge of an hour kind on a date, ppm of the ordinary hour; overtime includes the hour itself. */
export function hourFactor(kind: HourKind, date: string): number {
  const sunday = valueAt('sunday_holiday_surcharge', date);
  switch (kind) {
    case 'night': return valueAt('night_surcharge', date);
    case 'sunday_holiday': return sunday;
    // Night work on a rest day carries both surcharges (CST art. 168 num. 4 bars stacking overtime
    // surcharges among themselves, not the rest-day one).
    case 'sunday_holiday_night': return sunday + valueAt('night_surcharge', date);
    case 'overtime_day': return 1_000_000 + valueAt('overtime_day', date);
    case 'overtime_night': return 1_000_000 + valueAt('overtime_night', date);
    case 'overtime_day_sunday_holiday': return 1_000_000 + valueAt('overtime_day', date) + sunday;
    case 'overtime_night_sunday_holiday': return 1_000_000 + valueAt('overtime_night', date) + sunday;
  }
}

/** The solidarity-fund rate (ppm) for a monthly IBC, in minimum wages (Ley 797 de 2003 art. 8). */
function solidarityRate(monthlyIbc: Q, smmlv: number, date: string): number {
  const times = (k: number) => cmp(monthlyIbc, q(BigInt(smmlv) * BigInt(k))) ;
  if (times(20) > 0) return valueAt('solidarity_fund_above_20', date);
  if (times(19) >= 0) return valueAt('solidarity_fund_from_19', date);
  if (times(18) >= 0) return valueAt('solidarity_fund_from_18', date);
  if (times(17) >= 0) return valueAt('solidarity_fund_from_17', date);
  if (times(16) >= 0) return valueAt('solidarity_fund_from_16', date);
  if (times(4) >= 0) return valueAt('solidarity_fund_from_4', date);
  return 0;
}

const sum = (lines: readonly { amount: number }[]) => lines.reduce((s, l) => s + l.amount, 0);

/** The order PILA lines are listed in, and the subsystems withheld from the employee. */
const PILA_ORDER: readonly PilaLine['subsystem'][] = ['health', 'pension', 'solidarity_fund', 'arl', 'family_fund', 'icbf', 'sena'];
const WITHHELD: readonly PilaLine['subsystem'][] = ['health', 'pension', 'solidarity_fund'];

/** The payroll of one employee for one period (see the module comment for the conventions). */
export function calculatePayroll(input: PayrollInput): PayrollResult {
  const { from, to } = input.period;
  if (to < from) throw new RangeError('The period ends before it starts.');
  const dates = datesOf(from, to);
  const days = commercialDays(from, to);
  const end = to;
  const changes = [...(input.salary_changes ?? [])].sort((a, b) => (a.from < b.from ? -1 : 1));
  /** The monthly salary on a date. */
  const salaryOn = (date: string): number => {
    let s = input.salary;
    for (const c of changes) if (c.from <= date) s = c.salary;
    return s;
  };

  // Sick-leave dates inside the period, with the day number within the leave.
  const sickDays: { date: string; n: number }[] = [];
  for (const leave of input.sick_leave ?? []) {
    for (let i = 0; i < leave.days; i += 1) {
      const date = addDays(leave.start, i);
      if (date < from || date > to) throw new RangeError(`Sick leave day ${date} falls outside the period.`);
      sickDays.push({ date, n: (leave.prior_days ?? 0) + i + 1 });
    }
  }
  const sickSet = new Set(sickDays.map((s) => s.date));
  const runOf = (kind: string, runs: readonly { start: string; days: number }[] | undefined) => {
    const out = new Set<string>();
    for (const r of runs ?? []) {
      for (let i = 0; i < r.days; i += 1) {
        const date = addDays(r.start, i);
        if (date < from || date > to) throw new RangeError(`${kind} day ${date} falls outside the period.`);
        if (sickSet.has(date) || out.has(date)) throw new RangeError(`${kind} day ${date} overlaps another absence.`);
        out.add(date);
      }
    }
    return out;
  };
  const unpaidSet = runOf('Unpaid leave', input.unpaid_leave);
  const vacationSet = runOf('Vacation', input.vacations);
  for (const d of vacationSet) if (unpaidSet.has(d)) throw new RangeError(`Vacation day ${d} overlaps unpaid leave.`);
  const weightOf = (set: ReadonlySet<string>) => [...set].reduce((s, d) => s + commercialWeight(d), 0);
  // Dates the contract runs (unpaid leave suspends it), and dates actually worked.
  const contractDates = dates.filter((d) => !unpaidSet.has(d));
  const workedDates = contractDates.filter((d) => !sickSet.has(d) && !vacationSet.has(d));
  const sickWeight = sickDays.reduce((s, x) => s + commercialWeight(x.date), 0);
  const unpaidWeight = weightOf(unpaidSet);
  const vacationWeight = weightOf(vacationSet);
  const worked = days - sickWeight - unpaidWeight - vacationWeight;

  const earnings: PayrollLine[] = [];
  const salaryEarned = roundHalfUp(prorated(workedDates, salaryOn));
  earnings.push({ concept: 'salary', amount: salaryEarned, days: worked });
  const vacationPay = vacationSet.size ? roundHalfUp(prorated([...vacationSet].sort(), salaryOn)) : 0;
  if (vacationSet.size) earnings.push({ concept: 'vacations', amount: vacationPay, days: vacationWeight });

  for (const h of input.hours ?? []) {
    if (h.date < from || h.date > to) throw new RangeError(`Hours on ${h.date} fall outside the period.`);
    const factor = hourFactor(h.kind, h.date);
    const divisor = valueAt('monthly_hour_divisor', h.date);
    const hundredths = BigInt(Math.round(h.hours * 100));
    // salary / divisor is the ordinary hour; never rounded before the line is.
    earnings.push({ concept: h.kind, amount: roundHalfUp({ n: BigInt(salaryOn(h.date)) * BigInt(factor) * hundredths, d: BigInt(divisor) * PPM * 100n }), date: h.date, hours: h.hours, rate_ppm: factor });
  }
  if (input.commissions) earnings.push({ concept: 'commissions', amount: input.commissions });
  if (input.bonus_salary) earnings.push({ concept: 'bonus_salary', amount: input.bonus_salary });

  // Sick leave: the first days by the employer, then the health fund; never below the minimum wage a day.
  const sickLines = new Map<string, { q: Q; days: number; rate: number; payer: 'employer' | 'health_fund' }>();
  for (const s of sickDays) {
    const w = commercialWeight(s.date);
    if (!w) continue;
    const employer = s.n <= valueAt('sick_leave_employer_days', s.date);
    const rate = valueAt(employer ? 'sick_leave_employer_days_rate' : 'sick_leave_rate', s.date);
    const floor = BigInt(valueAt('minimum_wage', s.date)) * BigInt(valueAt('sick_leave_floor', s.date)) * PPM;
    const monthly = max(q(BigInt(salaryOn(s.date)) * BigInt(rate)), q(floor));
    const day = { n: monthly.n * BigInt(w), d: monthly.d * 30n * PPM };
    const key = `${employer ? 'employer' : 'health_fund'}:${rate}`;
    const line = sickLines.get(key) ?? { q: q(0), days: 0, rate, payer: employer ? 'employer' as const : 'health_fund' as const };
    line.q = add(line.q, day);
    line.days += w;
    sickLines.set(key, line);
  }
  const sickPay: PayrollLine[] = [...sickLines.values()].map((l) => ({ concept: 'sick_leave', amount: roundHalfUp(l.q), days: l.days, rate_ppm: l.rate, payer: l.payer }));
  earnings.push(...sickPay);

  // Transport allowance: salary up to the cap in minimum wages, for the days actually worked.
  const eligible = workedDates.filter((d) => salaryOn(d) <= valueAt('minimum_wage', d) * valueAt('transport_allowance_cap', d));
  const transport = roundHalfUp(prorated(eligible, (d) => valueAt('transport_allowance', d)));
  if (transport) earnings.push({ concept: 'transport_allowance', amount: transport, days: eligible.reduce((s, d) => s + commercialWeight(d), 0) });
  if (input.bonus_non_salary) earnings.push({ concept: 'bonus_non_salary', amount: input.bonus_non_salary });

  // Contribution bases: of the month so far when the earlier days of the month were booked apart
  // (`earlier`, the first half), else of this period.
  // Vacation pay is salary for the contribution bases (Ley 100 art. 18 read with CST art. 186).
  const isSalaryType = (l: PayrollLine) => l.concept !== 'sick_leave' && l.concept !== 'transport_allowance' && l.concept !== 'bonus_non_salary';
  const prior = input.earlier?.pila ? input.earlier : undefined;
  const priorSum = (pick: (l: PayrollLine) => boolean) => (prior ? sum(prior.earnings.filter(pick)) : 0);
  const periodSalaryType = sum(earnings.filter(isSalaryType));
  const salaryType = periodSalaryType + priorSum(isSalaryType);
  const sickTotal = sum(sickPay) + priorSum((l) => l.concept === 'sick_leave');
  const nonSalary = (input.bonus_non_salary ?? 0) + priorSum((l) => l.concept === 'bonus_non_salary');
  const monthVacationPay = vacationPay + priorSum((l) => l.concept === 'vacations');
  // The earlier days count for the floor and ceiling by their number (one month: one minimum wage).
  const priorContractDays = prior ? prior.period.days - prior.unpaid_days : 0;
  const priorWorked = prior?.days_worked ?? 0;
  // Ley 1393 art. 30: what non-salary pay exceeds of 40 % of (salary + non-salary pay) enters the IBC.
  const capRate = valueAt('non_salary_cap', end);
  const allowed = q(BigInt(salaryType + nonSalary) * BigInt(capRate), PPM);
  const excess = cmp(q(nonSalary), allowed) > 0 ? roundHalfUp({ n: BigInt(nonSalary) * allowed.d - allowed.n, d: allowed.d }) : 0;
  const wagesFor = (factor: ParameterKey, extraDays: number) => q(BigInt(valueAt('minimum_wage', end)) * BigInt(valueAt(factor, end)) * BigInt(extraDays), 30);
  const floorOver = (ds: readonly string[], extraDays: number) => add(prorated(ds, (d) => valueAt('minimum_wage', d) * valueAt('contribution_base_floor', d)), wagesFor('contribution_base_floor', extraDays));
  const ceilingOver = (ds: readonly string[], extraDays: number) => add(prorated(ds, (d) => valueAt('minimum_wage', d) * valueAt('contribution_base_ceiling', d)), wagesFor('contribution_base_ceiling', extraDays));
  const ibcUnit = valueAt('ibc_rounding', end);
  const clampBase = (raw: number, ds: readonly string[], extraDays: number) => (raw === 0 && ds.length === 0 && extraDays === 0 ? 0 : ceilTo(min(max(q(raw), floorOver(ds, extraDays)), ceilingOver(ds, extraDays)), ibcUnit));
  const ibcHealth = clampBase(salaryType + sickTotal + excess, contractDates, priorContractDays);
  // Occupational risk is not paid for days on sick leave: the base is the worked days' pay.
  const ibcArl = worked + priorWorked > 0 ? clampBase(salaryType - monthVacationPay + excess, workedDates, priorWorked) : 0;
  // Family fund, ICBF and SENA apply to the salary payments of the month (Ley 21 de 1982).
  const paraBase = ceilTo(q(salaryType), ibcUnit);

  // ET art. 114-1: employees earning (salary payments only, DIAN Concepto 7196 de 2025) under 10 minimum wages.
  const contractDays = (days - unpaidWeight || days) + priorContractDays;
  const monthlySalaryPay = q(BigInt(salaryType + sickTotal) * 30n, contractDays);
  const exempt = Boolean(input.exempt_114_1) && cmp(monthlySalaryPay, q(BigInt(valueAt('minimum_wage', end)) * BigInt(valueAt('exemption_114_1_below', end)))) < 0;

  // Contributions as PILA declares them (Decreto 780 de 2016 art. 3.2.1.5 as modified by Decreto
  // 1990 de 2016; parameters `ibc_rounding`, `contribution_rounding`): per subsystem, base × the
  // employee's and the employer's rates together, up to the next multiple of the unit (100 pesos).
  // The employee's share is their own rate on the base, half up to the peso, and never more: the
  // approximation of the declared figure is the employer's, the aportante who declares and pays it
  // (Ley 100 de 1993 art. 22: the employer answers for the whole contribution). So the employer's
  // share is the declared figure less the employee's, and the books credit each administrator
  // exactly what PILA pays it.
  const pilaUnit = valueAt('contribution_rounding', end);
  const ppmOf = (r: Q) => roundHalfUp(mul(r, q(PPM)));
  const pila: PilaLine[] = [];
  const subsystem = (name: PilaLine['subsystem'], base: number, employeeRate: Q, employerRate: Q): void => {
    const amount = ceilTo(mul(q(base), add(employeeRate, employerRate)), pilaUnit);
    const employeeShare = roundHalfUpTo(mul(q(base), employeeRate), ibcUnit);
    const line: PilaLine = {
      subsystem: name, base, rate_ppm: ppmOf(add(employeeRate, employerRate)), amount,
      employee: employeeShare, employer: amount - employeeShare, employee_rate_ppm: ppmOf(employeeRate), employer_rate_ppm: ppmOf(employerRate),
    };
    pila.push(line);
  };
  const rate = (key: ParameterKey) => rateOver(key, dates, days);
  const none = q(0);
  subsystem('health', ibcHealth, rate('health_employee'), exempt ? none : rate('health_employer'));
  subsystem('pension', ibcHealth, rate('pension_employee'), rate('pension_employer'));
  const solidarityPpm = solidarityRate(q(BigInt(ibcHealth) * 30n, contractDays), valueAt('minimum_wage', end), end);
  if (solidarityPpm) subsystem('solidarity_fund', ibcHealth, q(solidarityPpm, PPM), none);
  subsystem('arl', ibcArl, none, rate(`arl_class_${input.arl_class}` as ParameterKey));
  subsystem('family_fund', paraBase, none, rate('family_fund'));
  subsystem('icbf', paraBase, none, exempt ? none : rate('icbf'));
  subsystem('sena', paraBase, none, exempt ? none : rate('sena'));

  // With the month's earlier days booked apart, this period books the month's figures less theirs
  // (a subsystem they booked and the month no longer owes comes back negative).
  if (prior) {
    for (const was of prior.pila) {
      const now = pila.find((l) => l.subsystem === was.subsystem);
      if (now) {
        now.base -= was.base; now.amount -= was.amount; now.employee -= was.employee; now.employer -= was.employer;
      } else {
        pila.push({ ...was, base: -was.base, amount: -was.amount, employee: -was.employee, employer: -was.employer });
      }
    }
  }
  pila.sort((x, y) => PILA_ORDER.indexOf(x.subsystem) - PILA_ORDER.indexOf(y.subsystem));
  const employeeLine = (l: PilaLine): PayrollLine => ({ concept: l.subsystem, amount: l.employee, base: l.base, rate_ppm: l.employee_rate_ppm });
  const employerLine = (l: PilaLine): PayrollLine => ({ concept: l.subsystem, amount: l.employer, base: l.base, rate_ppm: l.employer_rate_ppm });
  // Health, pension and the solidarity fund are withheld (the fund is the employee's alone; the
  // employer's line of it is only the approximation of its declared figure); the rest is the employer's.
  const employee: PayrollLine[] = pila.filter((l) => WITHHELD.includes(l.subsystem)).map(employeeLine);

  const deductions: PayrollLine[] = (input.deductions ?? []).map((d) => ({ concept: d.label ? `${d.kind}: ${d.label}` : d.kind, amount: d.amount }));

  const employer: PayrollLine[] = pila.map(employerLine);

  // Provisions: severance and service bonus on the salary of the whole period (sick days count as
  // time served) plus variable salary and the transport allowance; vacations on the salary alone.
  const salaryForDays = prorated(contractDates, salaryOn);
  const variable = periodSalaryType - salaryEarned - vacationPay;
  const prestBase = add(salaryForDays, q(variable + transport));
  const severance = mul(prestBase, q(valueAt('severance_days_per_year', end), 360));
  const provisions: PayrollLine[] = [
    { concept: 'severance', amount: roundHalfUp(severance), base: roundHalfUp(prestBase) },
    { concept: 'severance_interest', amount: roundHalfUp(mul(severance, q(valueAt('severance_interest', end), PPM))), base: roundHalfUp(severance), rate_ppm: valueAt('severance_interest', end) },
    { concept: 'service_bonus', amount: roundHalfUp(mul(prestBase, q(valueAt('service_bonus_days_per_year', end), 360))), base: roundHalfUp(prestBase) },
    { concept: 'vacations', amount: roundHalfUp(mul(salaryForDays, q(valueAt('vacation_days_per_year', end), 360))), base: roundHalfUp(salaryForDays) },
  ];

  const totalEarnings = sum(earnings);
  const totalEmployee = sum(employee);
  const totalDeductions = sum(deductions);
  return {
    period: { from, to, days },
    days_worked: worked,
    sick_days: sickWeight,
    unpaid_days: unpaidWeight,
    vacation_days: vacationWeight,
    earnings,
    // What this period books of the bases (the month's less the earlier days', with `earlier`).
    ibc: { health_pension: ibcHealth - (prior?.ibc.health_pension ?? 0), arl: ibcArl - (prior?.ibc.arl ?? 0), parafiscal: paraBase - (prior?.ibc.parafiscal ?? 0) },
    exempt_114_1: exempt,
    employee_contributions: employee,
    deductions,
    employer_contributions: employer,
    pila,
    provisions,
    totals: {
      earnings: totalEarnings,
      employee_contributions: totalEmployee,
      deductions: totalDeductions,
      net: totalEarnings - totalEmployee - totalDeductions,
      employer_contributions: sum(employer),
      provisions: sum(provisions),
    },
  };
}
