import { describe, expect, it } from 'vitest';
import { calculatePayroll, commercialDays, type PayrollLine, type PayrollResult } from '../../src/modules/payroll/calc.ts';

/**
 * Hand-worked payrolls (issue 18). Amounts are minor units (centavos): 175_090_500 is
 * $1.750.905,00. Each expectation below was worked out by hand in the comments before the
 * engine ran; the rules are those of calc.ts (lines rounded half up to the centavo, IBC up to
 * the peso; each subsystem's contribution as PILA declares it — employee and employer rates
 * together — up to the next 100 pesos, Decreto 1990 de 2016; the employee's share half up to the
 * peso, the employer's the rest).
 */

const line = (lines: PayrollLine[], concept: string) => lines.find((l) => l.concept === concept);
const amounts = (lines: PayrollLine[]) => Object.fromEntries(lines.map((l) => [l.concept, l.amount]));

describe('the commercial month', () => {
  it('counts every month as 30 days: day 31 weighs nothing, the end of February makes up the rest', () => {
    expect(commercialDays('2026-03-01', '2026-03-31')).toBe(30);
    expect(commercialDays('2026-02-01', '2026-02-28')).toBe(30);
    expect(commercialDays('2028-02-01', '2028-02-29')).toBe(30);
    expect(commercialDays('2026-03-16', '2026-03-31')).toBe(15);
    expect(commercialDays('2026-06-16', '2026-07-15')).toBe(30);
  });
});

describe('a minimum-wage employee, March 2026 (transport allowance)', () => {
  // SMMLV 2026 = 1.750.905 (175_090_500); transport allowance 249.095 (24_909_500).
  const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 175_090_500, arl_class: 1, exempt_114_1: true });

  it('earns the salary and the whole transport allowance', () => {
    // 30 commercial days: salary 175_090_500 × 30/30; 1 SMMLV ≤ 2 SMMLV so transport 24_909_500 × 30/30.
    expect(r.period.days).toBe(30);
    expect(amounts(r.earnings)).toEqual({ salary: 175_090_500, transport_allowance: 24_909_500 });
    expect(r.totals.earnings).toBe(200_000_000);
  });

  it('deducts health and pension on the IBC, which leaves out the transport allowance', () => {
    // IBC = salary 175_090_500 (whole peso already; the floor is 1 SMMLV = the same).
    // health 4 % = 70.036,20 → half up to the peso 70.036 (7_003_600); pension 4 % the same; no solidarity fund under 4 SMMLV.
    // net = 200_000_000 − 7_003_600 − 7_003_600 = 185_992_800.
    expect(r.ibc.health_pension).toBe(175_090_500);
    expect(amounts(r.employee_contributions)).toEqual({ health: 7_003_600, pension: 7_003_600 });
    expect(r.totals.net).toBe(185_992_800);
  });

  it('costs the employer pension, ARL class I and the family fund; health, ICBF and SENA are exempt (ET 114-1)', () => {
    // 1 SMMLV < 10 SMMLV: the employer's health, ICBF and SENA rates are 0. PILA declares, on 1.750.905:
    // health 4 % = 70.036,20 → 70.100: employer 70.100 − 70.036 = 64 (the approximation);
    // pension 16 % = 280.144,80 → 280.200 (the audit's example): employer 280.200 − 70.036 = 210.164;
    // ARL I 0,522 % = 9.139,72 → 9.200; family fund 4 % = 70.036,20 → 70.100; ICBF and SENA 0.
    // Employer total = 64 + 210.164 + 9.200 + 70.100 = 289.528 (28_952_800).
    expect(r.exempt_114_1).toBe(true);
    expect(amounts(r.employer_contributions)).toEqual({ health: 6_400, pension: 21_016_400, arl: 920_000, family_fund: 7_010_000, icbf: 0, sena: 0 });
    expect(r.totals.employer_contributions).toBe(28_952_800);
  });

  it('declares each subsystem in PILA up to the next 100 pesos, employee plus employer (Decreto 1990 de 2016)', () => {
    // The figures above, as PILA declares them: amount = employee + employer, a multiple of 10_000 centavos.
    expect(r.pila.map((l) => [l.subsystem, l.base, l.rate_ppm, l.amount, l.employee, l.employer])).toEqual([
      ['health', 175_090_500, 40_000, 7_010_000, 7_003_600, 6_400],
      ['pension', 175_090_500, 160_000, 28_020_000, 7_003_600, 21_016_400],
      ['arl', 175_090_500, 5_220, 920_000, 0, 920_000],
      ['family_fund', 175_090_500, 40_000, 7_010_000, 0, 7_010_000],
      ['icbf', 175_090_500, 0, 0, 0, 0],
      ['sena', 175_090_500, 0, 0, 0, 0],
    ]);
    for (const l of r.pila) expect(l.amount % 10_000).toBe(0);
    // What the payslip withholds and the employer bears is exactly what PILA pays.
    const declared = r.pila.reduce((t, l) => t + l.amount, 0);
    expect(r.totals.employee_contributions + r.totals.employer_contributions).toBe(declared);
  });

  it('provisions severance, its interest, the service bonus and vacations', () => {
    // base = salary 175_090_500 + transport 24_909_500 = 200_000_000;
    // severance = 200_000_000 × 30/360 = 16_666_666.67 → 16_666_667; interest = 12 % of the exact severance = 2_000_000;
    // service bonus = 16_666_667; vacations = 175_090_500 × 15/360 = 7_295_437.5 → 7_295_438.
    expect(amounts(r.provisions)).toEqual({ severance: 16_666_667, severance_interest: 2_000_000, service_bonus: 16_666_667, vacations: 7_295_438 });
  });
});

describe('an employee on five minimum wages, March 2026 (solidarity fund, no transport allowance)', () => {
  // 5 × 175_090_500 = 875_452_500.
  const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 875_452_500, arl_class: 1, exempt_114_1: false });

  it('gets no transport allowance and pays 1 % to the solidarity fund', () => {
    // 5 SMMLV > 2 SMMLV: no transport allowance. IBC 875_452_500 (5 SMMLV ≥ 4: solidarity 1 %).
    // health 4 % = 350.181 (35_018_100); pension the same; solidarity 1 % = 87.545,25 → half up 87.545 (8_754_500).
    // net = 875_452_500 − 35_018_100 − 35_018_100 − 8_754_500 = 796_661_800.
    expect(amounts(r.earnings)).toEqual({ salary: 875_452_500 });
    expect(amounts(r.employee_contributions)).toEqual({ health: 35_018_100, pension: 35_018_100, solidarity_fund: 8_754_500 });
    expect(line(r.employee_contributions, 'solidarity_fund')?.rate_ppm).toBe(10_000);
    expect(r.totals.net).toBe(796_661_800);
  });

  it('costs the employer every contribution when the company does not qualify for ET 114-1', () => {
    // PILA on 8.754.525: health 12,5 % = 1.094.315,63 → 1.094.400, employer 1.094.400 − 350.181 = 744.219;
    // pension 16 % = 1.400.724 → 1.400.800, employer 1.400.800 − 350.181 = 1.050.619;
    // solidarity 1 % = 87.545,25 → 87.600, employer 87.600 − 87.545 = 55 (the approximation only);
    // ARL I 0,522 % = 45.698,62 → 45.700; family fund 4 % = 350.181 → 350.200; ICBF 3 % = 262.635,75 → 262.700;
    // SENA 2 % = 175.090,50 → 175.100.
    expect(amounts(r.employer_contributions)).toEqual({ health: 74_421_900, pension: 105_061_900, solidarity_fund: 5_500, arl: 4_570_000, family_fund: 35_020_000, icbf: 26_270_000, sena: 17_510_000 });
  });

  it('exempts health, ICBF and SENA under 10 minimum wages when the company qualifies', () => {
    const exempt = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 875_452_500, arl_class: 1, exempt_114_1: true });
    // Health declared at the employee's 4 % only: 350.181 → 350.200, the employer's share the 19 pesos of approximation.
    expect(amounts(exempt.employer_contributions)).toMatchObject({ health: 1_900, icbf: 0, sena: 0, pension: 105_061_900, family_fund: 35_020_000 });
  });

  it('raises the solidarity fund in the higher brackets and caps the IBC at 25 minimum wages', () => {
    // 17 SMMLV = 2_976_538_500: 1.4 % = 416.715,39 → half up 416.715 (41_671_500); declared 416.800.
    const seventeen = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 2_976_538_500, arl_class: 1 });
    expect(line(seventeen.employee_contributions, 'solidarity_fund')).toMatchObject({ amount: 41_671_500, rate_ppm: 14_000 });
    expect(seventeen.pila.find((l) => l.subsystem === 'solidarity_fund')).toMatchObject({ amount: 41_680_000, employee: 41_671_500, employer: 8_500 });
    // 30 SMMLV: IBC = 25 × 175_090_500 = 4_377_262_500; health 4 % = 1.750.905; solidarity 2 % = 875.452,50 → half up 875.453.
    const thirty = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 5_252_715_000, arl_class: 1 });
    expect(thirty.ibc.health_pension).toBe(4_377_262_500);
    expect(amounts(thirty.employee_contributions)).toEqual({ health: 175_090_500, pension: 175_090_500, solidarity_fund: 87_545_300 });
  });
});

describe('night and Sunday hours on both sides of 1 July 2026', () => {
  // Period 16 Jun – 15 Jul 2026 (30 commercial days), salary 2.000.000 (200_000_000).
  // Sunday surcharge: 80 % to 30 Jun, 90 % from 1 Jul (Ley 2466 art. 14). Hour divisor: 220 (44 h)
  // to 14 Jul, 210 (42 h) from 15 Jul (Ley 2101 art. 3). Night surcharge 35 %.
  const r = calculatePayroll({
    period: { from: '2026-06-16', to: '2026-07-15' }, salary: 200_000_000, arl_class: 1, exempt_114_1: true,
    hours: [
      { kind: 'night', date: '2026-06-25', hours: 5 }, // Thursday
      { kind: 'night', date: '2026-07-15', hours: 5 }, // Wednesday, first day of 42 h
      { kind: 'sunday_holiday', date: '2026-06-28', hours: 2 }, // Sunday, 80 %
      { kind: 'sunday_holiday', date: '2026-07-05', hours: 2 }, // Sunday, 90 %
    ],
  });

  it('values each hour with the surcharge and divisor of its own date', () => {
    // night 25 Jun: 200_000_000 × 0.35 × 5 / 220 = 1_590_909.09 → 1_590_909
    // night 15 Jul: 200_000_000 × 0.35 × 5 / 210 = 1_666_666.67 → 1_666_667
    // Sunday 28 Jun: 200_000_000 × 0.80 × 2 / 220 = 1_454_545.45 → 1_454_545
    // Sunday 5 Jul:  200_000_000 × 0.90 × 2 / 220 = 1_636_363.64 → 1_636_364
    const hours = r.earnings.filter((l) => l.hours);
    expect(hours.map((l) => [l.concept, l.date, l.rate_ppm, l.amount])).toEqual([
      ['night', '2026-06-25', 350_000, 1_590_909],
      ['night', '2026-07-15', 350_000, 1_666_667],
      ['sunday_holiday', '2026-06-28', 800_000, 1_454_545],
      ['sunday_holiday', '2026-07-05', 900_000, 1_636_364],
    ]);
  });

  it('adds them to the IBC and the net pay', () => {
    // hours = 1_590_909 + 1_666_667 + 1_454_545 + 1_636_364 = 6_348_485
    // earnings = 200_000_000 + 6_348_485 + transport 24_909_500 = 231_257_985
    // IBC = 206_348_485 → up to the peso 206_348_500; health 4 % = 82.539,40 → 82.539 (8_253_900); pension the same.
    // net = 231_257_985 − 16_507_800 = 214_750_185.
    expect(r.totals.earnings).toBe(231_257_985);
    expect(r.ibc.health_pension).toBe(206_348_500);
    expect(amounts(r.employee_contributions)).toEqual({ health: 8_253_900, pension: 8_253_900 });
    expect(r.totals.net).toBe(214_750_185);
  });

  it('prices overtime with the hour itself, and a Sunday overtime hour with both surcharges', () => {
    // overtime day 1 h on 1 Jul: 200_000_000 × 1.25 / 220 = 1_136_363.64 → 1_136_364;
    // overtime night on a Sunday (5 Jul): 200_000_000 × (1 + 0.75 + 0.90) / 220 = 2_409_090.91 → 2_409_091.
    const o = calculatePayroll({ period: { from: '2026-07-01', to: '2026-07-15' }, salary: 200_000_000, arl_class: 1, hours: [
      { kind: 'overtime_day', date: '2026-07-01', hours: 1 }, { kind: 'overtime_night_sunday_holiday', date: '2026-07-05', hours: 1 },
    ] });
    expect(o.earnings.filter((l) => l.hours).map((l) => l.amount)).toEqual([1_136_364, 2_409_091]);
  });
});

describe('five days of sick leave, March 2026', () => {
  // Salary 3.000.000 (300_000_000); leave 2–6 March, days 1–5 of the leave.
  const r: PayrollResult = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 300_000_000, arl_class: 1, exempt_114_1: true, sick_leave: [{ start: '2026-03-02', days: 5 }] });

  it('pays 25 days of salary, two days by the employer at 100 % and three by the health fund at 66.67 %', () => {
    // salary 300_000_000 × 25/30 = 250_000_000
    // employer days 1–2: 300_000_000 / 30 × 2 = 20_000_000
    // health fund days 3–5: 300_000_000 × 0.6667 / 30 = 6_667_000 a day (above the floor 175_090_500 / 30 = 5_836_350) × 3 = 20_001_000
    // transport for the 25 days worked: 24_909_500 × 25/30 = 20_757_916.67 → 20_757_917
    expect(r.days_worked).toBe(25);
    expect(r.sick_days).toBe(5);
    expect(r.earnings.map((l) => [l.concept, l.payer ?? null, l.days ?? null, l.amount])).toEqual([
      ['salary', null, 25, 250_000_000],
      ['sick_leave', 'employer', 2, 20_000_000],
      ['sick_leave', 'health_fund', 3, 20_001_000],
      ['transport_allowance', null, 25, 20_757_917],
    ]);
  });

  it('contributes on salary plus sick pay, and ARL on the days worked only', () => {
    // IBC = 250_000_000 + 20_000_000 + 20_001_000 = 290_001_000; health 4 % = 116.000,40 → 116.000 (11_600_000); pension the same.
    // net = 250_000_000 + 40_001_000 + 20_757_917 − 23_200_000 = 287_558_917.
    // ARL base = 250_000_000 (worked days' pay); ARL I 0,522 % = 13.050 → declared 13.100 (1_310_000).
    expect(r.ibc).toEqual({ health_pension: 290_001_000, arl: 250_000_000, parafiscal: 250_000_000 });
    expect(amounts(r.employee_contributions)).toEqual({ health: 11_600_000, pension: 11_600_000 });
    expect(r.totals.net).toBe(287_558_917);
    expect(line(r.employer_contributions, 'arl')?.amount).toBe(1_310_000);
  });

  it('never pays a sick day below the minimum wage', () => {
    // minimum wage, days 3–5 of a leave: 175_090_500 × 0.6667 < 175_090_500, so the floor: 5_836_350 × 3 = 17_509_050.
    const low = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 175_090_500, arl_class: 1, sick_leave: [{ start: '2026-03-10', days: 3, prior_days: 2 }] });
    expect(low.earnings.filter((l) => l.concept === 'sick_leave').map((l) => [l.payer, l.amount])).toEqual([['health_fund', 17_509_050]]);
  });
});

describe('a period across a new year', () => {
  it('prorates the transport allowance with each year\'s value for its days', () => {
    // 16–31 Dec 2025: 15 days × 200.000/30 = 10_000_000; 1–15 Jan 2026: 15 days × 249.095/30 = 12_454_750.
    const r = calculatePayroll({ period: { from: '2025-12-16', to: '2026-01-15' }, salary: 150_000_000, arl_class: 1 });
    expect(line(r.earnings, 'transport_allowance')?.amount).toBe(22_454_750);
  });
});

describe('non-salary payments over 40 % of the remuneration', () => {
  it('bring the excess into the IBC (Ley 1393 art. 30)', () => {
    // salary 2.000.000, non-salary bonus 1.600.000: total 3.600.000; 40 % = 1.440.000; excess 160.000.
    // IBC = 200_000_000 + 16_000_000 = 216_000_000.
    const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 200_000_000, arl_class: 1, bonus_non_salary: 160_000_000 });
    expect(r.ibc.health_pension).toBe(216_000_000);
    expect(r.ibc.parafiscal).toBe(200_000_000);
  });

  it('deducts loans and other deductions from the net pay', () => {
    const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-15' }, salary: 200_000_000, arl_class: 1, deductions: [{ kind: 'loan', amount: 5_000_000, label: 'anticipo' }] });
    // 15 days: salary 100_000_000, transport 12_454_750; IBC 100_000_000; health and pension 4 % = 4_000_000 each.
    // net = 112_454_750 − 8_000_000 − 5_000_000 = 99_454_750.
    expect(r.deductions).toEqual([{ concept: 'loan: anticipo', amount: 5_000_000 }]);
    expect(r.totals.net).toBe(99_454_750);
  });
});

describe('unpaid leave and vacations, March 2026 (salary 3.000.000)', () => {
  it('does not pay unpaid leave, nor the transport allowance for it, nor count it as time served', () => {
    // Unpaid leave 9–10 March: 28 days paid = 300_000_000 × 28/30 = 280_000_000; transport 24_909_500 × 28/30 = 23_248_866.67 → 23_248_867.
    // IBC = 280_000_000 (floor 1 SMMLV × 28/30 = 163_417_800 is lower); health 4 % = 11_200_000.
    // Vacation provision on the 28 days of the contract: 280_000_000 × 15/360 = 11_666_666.67 → 11_666_667.
    const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 300_000_000, arl_class: 1, exempt_114_1: true, unpaid_leave: [{ start: '2026-03-09', days: 2 }] });
    expect(r.unpaid_days).toBe(2);
    expect(amounts(r.earnings)).toEqual({ salary: 280_000_000, transport_allowance: 23_248_867 });
    expect(r.ibc.health_pension).toBe(280_000_000);
    expect(amounts(r.employee_contributions)).toEqual({ health: 11_200_000, pension: 11_200_000 });
    expect(line(r.provisions, 'vacations')?.amount).toBe(11_666_667);
  });

  it('pays vacation days at the salary, with no transport allowance for them', () => {
    // Vacations 16–21 March (6 calendar days): salary 24 days = 240_000_000; vacations 6 days = 60_000_000;
    // transport for 24 days worked = 24_909_500 × 24/30 = 19_927_600. IBC = 300_000_000; ARL on the worked days' pay 240_000_000.
    const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 300_000_000, arl_class: 1, exempt_114_1: true, vacations: [{ start: '2026-03-16', days: 6 }] });
    expect(amounts(r.earnings)).toEqual({ salary: 240_000_000, vacations: 60_000_000, transport_allowance: 19_927_600 });
    expect(r.ibc).toEqual({ health_pension: 300_000_000, arl: 240_000_000, parafiscal: 300_000_000 });
  });

  it('pays each salary for its days when it changes inside the period', () => {
    // 1–15 at 2.000.000 = 100_000_000; 16–31 at 3.000.000 = 150_000_000; overtime day on the 20th at the new salary:
    // 300_000_000 × 1.25 / 220 = 1_704_545.45 → 1_704_545.
    const r = calculatePayroll({ period: { from: '2026-03-01', to: '2026-03-31' }, salary: 200_000_000, salary_changes: [{ from: '2026-03-16', salary: 300_000_000 }], arl_class: 1,
      hours: [{ kind: 'overtime_day', date: '2026-03-20', hours: 1 }] });
    expect(amounts(r.earnings)).toMatchObject({ salary: 250_000_000, overtime_day: 1_704_545 });
  });
});
