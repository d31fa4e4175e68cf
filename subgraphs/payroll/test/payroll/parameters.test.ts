import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { PARAMETER_STEPS, ParameterUnknown, stepsForYear, valueAt } from '../../src/modules/payroll/parameters.ts';

describe('parameters by date', () => {
  it('answers each figure on the date asked, across its mid-year steps', () => {
    // Ley 2466 art. 14: 75 % → 80 % (1 Jul 2025) → 90 % (1 Jul 2026) → 100 % (1 Jul 2027).
    expect([valueAt('sunday_holiday_surcharge', '2025-06-30'), valueAt('sunday_holiday_surcharge', '2025-07-01'), valueAt('sunday_holiday_surcharge', '2026-06-30'),
      valueAt('sunday_holiday_surcharge', '2026-07-01'), valueAt('sunday_holiday_surcharge', '2027-06-30'), valueAt('sunday_holiday_surcharge', '2027-07-01')])
      .toEqual([750_000, 800_000, 800_000, 900_000, 900_000, 1_000_000]);
    // Ley 2101 art. 3: 46 h → 44 h (15 Jul 2025) → 42 h (15 Jul 2026); divisor weekly ÷ 6 × 30.
    expect([valueAt('max_weekly_hours', '2025-07-14'), valueAt('max_weekly_hours', '2025-07-15'), valueAt('max_weekly_hours', '2026-07-14'), valueAt('max_weekly_hours', '2026-07-15')]).toEqual([46, 44, 44, 42]);
    expect([valueAt('monthly_hour_divisor', '2025-07-14'), valueAt('monthly_hour_divisor', '2026-07-14'), valueAt('monthly_hour_divisor', '2027-01-01')]).toEqual([230, 220, 210]);
    // Ley 2466 art. 10: night work from 7 p.m. from 25 Dec 2025.
    expect([valueAt('night_work_start', '2025-12-24'), valueAt('night_work_start', '2025-12-25')]).toEqual([21, 19]);
    expect([valueAt('minimum_wage', '2025-12-31'), valueAt('minimum_wage', '2026-01-01'), valueAt('transport_allowance', '2026-06-01')]).toEqual([142_350_000, 175_090_500, 24_909_500]);
  });

  it('refuses to guess a figure not decreed yet', () => {
    expect(() => valueAt('minimum_wage', '2027-01-01')).toThrow(ParameterUnknown);
    expect(() => valueAt('transport_allowance', '2027-03-01')).toThrow(ParameterUnknown);
    expect(valueAt('pension_employer', '2027-03-01')).toBe(120_000);
  });

  it('keeps each divisor equal to its weekly hours ÷ 6 × 30, and every step sourced', () => {
    for (const s of PARAMETER_STEPS.filter((x) => x.key === 'monthly_hour_divisor')) expect(s.value).toBe((valueAt('max_weekly_hours', s.effective_from) / 6) * 30);
    for (const s of PARAMETER_STEPS) {
      expect(s.source.length, s.key).toBeGreaterThan(5);
      expect(s.evidence.length, s.key).toBeGreaterThan(5);
    }
  });

  it('lists a year as the values in force on 1 January plus the changes during it', () => {
    const y2026 = stepsForYear(2026);
    expect(y2026.filter((s) => s.key === 'sunday_holiday_surcharge').map((s) => [s.effective_from, s.value])).toEqual([['2025-07-01', 800_000], ['2026-07-01', 900_000]]);
    expect(y2026.filter((s) => s.key === 'max_weekly_hours').map((s) => [s.effective_from, s.value])).toEqual([['2025-07-15', 44], ['2026-07-15', 42]]);
    // 2027 has no minimum wage or transport allowance yet.
    expect(stepsForYear(2027).some((s) => s.key === 'minimum_wage' || s.key === 'transport_allowance')).toBe(false);
  });
});

let payroll: TestSubgraph;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

const owner = testPrincipal();
const records = async (q: unknown) => (await payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q }, owner)).body;

describe('payroll_parameters (records.list) through the subgraph', () => {
  it('answers one row per parameter step of the year named by ref, with value, effective date and source', async () => {
    const body = await records({ source: 'payroll_parameters', ref: '2026', limit: 100 });
    expect(body.errors).toBeUndefined();
    const answer = body.data.payrollRecords;
    expect(answer.source).toBe('payroll_parameters');
    expect(answer.total).toBe(stepsForYear(2026).length);
    expect(answer.rows).toHaveLength(answer.total);
    const wage = answer.rows.find((r: any) => r.key === 'minimum_wage');
    expect(wage).toMatchObject({ id: 'minimum_wage@2026-01-01', kind: 'wages', value: 175_090_500, unit: 'cop_minor', effective_from: '2026-01-01', status: 'verified' });
    expect(wage.source).toContain('Decreto 1469 de 2025');
    expect(answer.rows.filter((r: any) => r.key === 'sunday_holiday_surcharge').map((r: any) => [r.effective_from, r.value, r.unit])).toEqual([['2025-07-01', 800_000, 'ppm'], ['2026-07-01', 900_000, 'ppm']]);
    expect(answer.rows.filter((r: any) => r.key === 'monthly_hour_divisor').map((r: any) => r.value)).toEqual([220, 210]);
  });

  it('filters by kind, status and search, and pages by cursor', async () => {
    const unverified = (await records({ source: 'payroll_parameters', ref: '2026', status: 'unverified', limit: 100 })).data.payrollRecords;
    expect(unverified.rows.map((r: any) => r.key).sort()).toEqual(['sick_leave_employer_days_rate', 'vacation_days_per_year']);
    // The PILA approximations, read in Decreto 1990 de 2016 (issue 30 item 10): IBC up to the peso, each contribution up to 100 pesos.
    const rounding = (await records({ source: 'payroll_parameters', ref: '2026', search: 'decreto 1990', limit: 100 })).data.payrollRecords.rows;
    expect(rounding.map((r: any) => [r.key, r.value, r.unit, r.status])).toEqual([['ibc_rounding', 100, 'cop_minor', 'verified'], ['contribution_rounding', 10_000, 'cop_minor', 'verified']]);
    expect(rounding[1].source).toContain('3.2.1.5');
    expect(rounding[1].evidence).toContain('múltiplo de 100 superior');
    const hours = (await records({ source: 'payroll_parameters', ref: '2026', kind: 'hours', limit: 100 })).data.payrollRecords;
    expect(hours.rows.every((r: any) => r.kind === 'hours')).toBe(true);
    expect((await records({ source: 'payroll_parameters', ref: '2026', search: 'ley 2466', limit: 100 })).data.payrollRecords.rows.map((r: any) => r.key))
      .toEqual(['night_work_start', 'sunday_holiday_surcharge', 'sunday_holiday_surcharge']); // 80 % from 2025-07-01, 90 % from 2026-07-01

    const first = (await records({ source: 'payroll_parameters', ref: '2025', limit: 20 })).data.payrollRecords;
    expect(first.rows).toHaveLength(20);
    const seen = [...first.rows];
    let cursor = first.next_cursor;
    while (cursor) {
      const next = (await records({ source: 'payroll_parameters', ref: '2025', limit: 20, cursor })).data.payrollRecords;
      seen.push(...next.rows);
      cursor = next.next_cursor;
    }
    expect(seen.map((r: any) => r.id)).toEqual(stepsForYear(2025).map((s) => `${s.key}@${s.effective_from}`));
  });

  it('defaults to the current year', async () => {
    const year = Number(localDate(new Date()).slice(0, 4));
    const body = await records({ source: 'payroll_parameters' });
    if (year >= 2025 && year <= 2027) expect(body.data.payrollRecords.total).toBe(stepsForYear(year).length);
    else expect(body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/ref' });
  });

  it('refuses what does not fit with the contract code and a JSON Pointer', async () => {
    const cases: [unknown, string][] = [
      [{ source: 'payroll_parameters', ref: '2024' }, '/ref'],
      [{ source: 'payroll_parameters', ref: 'this year' }, '/ref'],
      [{ source: 'payroll_parameters', ref: '2026', kind: 'bonuses' }, '/kind'],
      [{ source: 'payroll_parameters', ref: '2026', status: 'draft' }, '/status'],
      [{ source: 'payroll_parameters', ref: '2026', cursor: 'eyJwIjoxfQ.AAAAAAAAAAAAAAAAAAAAAA' }, '/cursor'],
    ];
    for (const [q, field] of cases) {
      const body = await records(q);
      expect(body.errors?.[0]?.extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field });
    }
  });
});

describe('payroll.parameters (read tool)', () => {
  it('answers the same rows as the records source', async () => {
    const r = await payroll.call('payroll.parameters', { year: 2026 }, owner);
    expect(r.ok).toBe(true);
    const source = (await records({ source: 'payroll_parameters', ref: '2026', limit: 100 })).data.payrollRecords;
    expect(r.output).toEqual({ year: 2026, parameters: source.rows });
    const employer = await payroll.call('payroll.parameters', { year: 2026, kind: 'employer' }, owner);
    expect(employer.output.parameters.map((p: any) => [p.key, p.value])).toEqual([
      ['health_employer', 85_000], ['pension_employer', 120_000], ['arl_class_1', 5_220], ['arl_class_2', 10_440], ['arl_class_3', 24_360], ['arl_class_4', 43_500], ['arl_class_5', 69_600],
      ['family_fund', 40_000], ['icbf', 30_000], ['sena', 20_000], ['exemption_114_1_below', 10],
    ]);
  });

  it('refuses a year outside the table at /year', async () => {
    const r = await payroll.call('payroll.parameters', { year: 2024 }, owner);
    expect(r).toMatchObject({ ok: false, code: 'invalid_input', field: '/year' });
  });
});
