import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { hirer } from '../support.ts';

/**
 * Employees' changes, novelties and runs through the subgraph (issue 18). Amounts are minor
 * units (centavos): 175_090_500 is $1.750.905,00. Every expected figure is worked out by hand in
 * the comments (rules of calc.ts: lines half up to the centavo, IBC up to the peso; each subsystem
 * declared to PILA up to the next 100 pesos, the employee's share half up to the peso, the employer's the rest).
 */

let payroll: TestSubgraph;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

type P = ReturnType<typeof testPrincipal>;
const hire = hirer(() => payroll);
const records = (p: P, q: unknown) => payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q }, p);
const amounts = (lines: { concept: string; amount: number }[]) => Object.fromEntries(lines.map((l) => [l.concept, l.amount]));

describe('employees.update', () => {
  it('changes the details but not the salary, and refuses what does not fit', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { name: 'Marta Gil' });
    const r = await payroll.call('employees.update', { id: e.id, position: 'Jefe de ventas', email: null, arl_class: 2 }, owner);
    expect(r.output.employee).toMatchObject({ position: 'Jefe de ventas', email: null, arl_class: 2, salary: { amount: 175_090_500 } });
    expect(await payroll.call('employees.update', { id: e.id, salary: { amount: 1, currency: 'COP' } }, owner)).toMatchObject({ code: 'invalid_input', field: '/salary' });
    expect(await payroll.call('employees.update', { id: e.id }, owner)).toMatchObject({ code: 'invalid_input', field: '' });
    expect(await payroll.call('employees.update', { id: e.id, name: '  ' }, owner)).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect(await payroll.call('employees.update', { id: e.id, arl_class: 6 }, owner)).toMatchObject({ code: 'invalid_input', field: '/arl_class' });
    // Another workspace sees nothing.
    expect(await payroll.call('employees.update', { id: e.id, position: 'x' }, testPrincipal())).toMatchObject({ code: 'not_found' });
  });
});

describe('employees.change_salary', () => {
  it('keeps the history, and a run spanning the change pays each salary for its days', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { salary: { amount: 200_000_000, currency: 'COP' } });
    const changed = await payroll.call('employees.change_salary', { id: e.id, amount: 300_000_000, effective_from: '2026-03-16' }, owner);
    expect(changed.output.employee.salary_history).toEqual([{ amount: 200_000_000, effective_from: '2026-01-01' }, { amount: 300_000_000, effective_from: '2026-03-16' }]);
    expect(changed.output.employee.salary.amount).toBe(300_000_000);
    // March: 1–15 at 2.000.000 → 15 × 200_000_000 / 30 = 100_000_000; 16–31 at 3.000.000 → 15 × 300_000_000 / 30 = 150_000_000.
    // Salary 250_000_000; both salaries ≤ 2 SMMLV (350_181_000): transport 24_909_500 for 30 days.
    const run = await payroll.call('payroll.run', { month: '2026-03' }, owner);
    const slip = run.output.payslips[0];
    expect(amounts(slip.earnings)).toEqual({ salary: 250_000_000, transport_allowance: 24_909_500 });
    // Vacation provision on the salary of the days: 250_000_000 × 15/360 = 10_416_666.67 → 10_416_667.
    expect(amounts(slip.provisions).vacations).toBe(10_416_667);
  });

  it('refuses a date not after the last change, the same salary, and a salary under the minimum wage', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    expect(await payroll.call('employees.change_salary', { id: e.id, amount: 200_000_000, effective_from: '2026-01-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/effective_from' });
    expect(await payroll.call('employees.change_salary', { id: e.id, amount: 175_090_500, effective_from: '2026-02-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/amount' });
    expect(await payroll.call('employees.change_salary', { id: e.id, amount: 175_090_499, effective_from: '2026-02-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/amount' });
    expect(await payroll.call('employees.change_salary', { id: e.id, amount: 200_000_000, effective_from: '2026-2-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/effective_from' });
    expect(await payroll.call('employees.change_salary', { id: e.id, amount: 200_000_000, effective_from: '2026-02-01' }, testPrincipal())).toMatchObject({ code: 'not_found' });
  });
});

describe('employees.terminate', () => {
  it('computes the final settlement by hand', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { salary: { amount: 200_000_000, currency: 'COP' } });
    const r = await payroll.call('employees.terminate', { id: e.id, date: '2026-03-15', reason: 'resignation' }, owner);
    // Days 1 Jan – 15 Mar 2026 (commercial): 30 + 30 + 15 = 75.
    // Base = salary 200_000_000 + transport 24_909_500 (2.000.000 ≤ 2 SMMLV) = 224_909_500.
    // Severance = 224_909_500 × 75 / 360 = 46_856_145.83 → 46_856_146.
    // Interest = 46_856_145.83 × 12 % × 75 / 360 = 1_171_403.65 → 1_171_404.
    // Service bonus (semester from 1 Jan, 75 days) = 46_856_146.
    // Vacations: 200_000_000 × 75 / 720 = 20_833_333.33 → 20_833_333 (none taken).
    // Total = 46_856_146 + 1_171_404 + 46_856_146 + 20_833_333 = 115_717_029.
    expect(r.output.employee).toMatchObject({ status: 'terminated', termination: { date: '2026-03-15', reason: 'resignation', note: null } });
    expect(r.output.employee.termination.settlement).toEqual({
      lines: [
        { concept: 'severance', amount: 46_856_146, base: 224_909_500, days: 75 },
        { concept: 'severance_interest', amount: 1_171_404, base: 46_856_146, days: 75 },
        { concept: 'service_bonus', amount: 46_856_146, base: 224_909_500, days: 75 },
        { concept: 'vacations', amount: 20_833_333, base: 200_000_000, days: 75 },
      ],
      total: 115_717_029,
    });
    // The run of March pays the terminated employee up to the last day: 15 days = 100_000_000.
    const run = await payroll.call('payroll.run', { month: '2026-03' }, owner);
    expect(run.output.payslips[0]).toMatchObject({ employee_id: e.id, period: { from: '2026-03-01', to: '2026-03-15', days: 15 } });
    expect(amounts(run.output.payslips[0].earnings).salary).toBe(100_000_000);
    // A terminated contract changes no more.
    expect(await payroll.call('employees.terminate', { id: e.id, date: '2026-03-20', reason: 'other' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('employees.update', { id: e.id, position: 'x' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('employees.change_salary', { id: e.id, amount: 300_000_000, effective_from: '2026-04-01' }, owner)).toMatchObject({ code: 'conflict' });
  });

  it('deducts the vacation days taken', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { salary: { amount: 240_000_000, currency: 'COP' } });
    expect((await payroll.call('payroll.novelties.create', { employee_id: e.id, type: 'vacations', from: '2026-02-02', to: '2026-02-07', days: 5 }, owner)).ok).toBe(true);
    const r = await payroll.call('employees.terminate', { id: e.id, date: '2026-06-30', reason: 'without_just_cause' }, owner);
    // 180 days served; owed = 180/24 − 5 = 2.5 days; 240_000_000 × (180 − 5 × 24) / 720 = 240_000_000 × 60 / 720 = 20_000_000.
    expect(r.output.employee.termination.settlement.lines[3]).toEqual({ concept: 'vacations', amount: 20_000_000, base: 240_000_000, days: 180 });
  });

  it('refuses a date before the hire date, and while a novelty falls after it', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { hire_date: '2026-02-01' });
    expect(await payroll.call('employees.terminate', { id: e.id, date: '2026-01-31', reason: 'other' }, owner)).toMatchObject({ code: 'invalid_input', field: '/date' });
    expect(await payroll.call('employees.terminate', { id: e.id, date: '2026-03-01', reason: 'sometimes' }, owner)).toMatchObject({ code: 'invalid_input', field: '/reason' });
    await payroll.call('payroll.novelties.create', { employee_id: e.id, type: 'commission', date: '2026-03-10', amount: 10_000_000 }, owner);
    expect(await payroll.call('employees.terminate', { id: e.id, date: '2026-03-05', reason: 'other' }, owner)).toMatchObject({ code: 'conflict' });
  });
});

describe('payroll.novelties', () => {
  it('records, lists and deletes novelties; the records source lists them by kind', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { name: 'Julián Mora' });
    const made = await payroll.call('payroll.novelties.create', { employee_id: e.id, type: 'overtime', hour_kind: 'overtime_night', date: '2026-03-05', hours: 1.5 }, owner);
    expect(made.output.novelty).toMatchObject({ type: 'overtime', hour_kind: 'overtime_night', from: '2026-03-05', to: '2026-03-05', hours: 1.5, employee_name: 'Julián Mora' });
    await payroll.call('payroll.novelties.create', { employee_id: e.id, type: 'leave', paid: false, from: '2026-03-09', to: '2026-03-10' }, owner);
    await payroll.call('payroll.novelties.create', { employee_id: e.id, type: 'bonus', salary_type: false, date: '2026-03-20', amount: 5_000_000, label: 'Alimentación' }, owner);
    const list = await payroll.call('payroll.novelties.list', { employee_id: e.id, type: 'leave' }, owner);
    expect(list.output.rows.map((r: any) => r.type)).toEqual(['leave']);
    const src = (await records(owner, { source: 'payroll_novelties', kind: 'bonus' })).body.data.payrollRecords;
    expect(src.rows.map((r: any) => r.label)).toEqual(['Alimentación']);
    expect((await records(owner, { source: 'payroll_novelties', search: 'julián' })).body.data.payrollRecords.rows).toHaveLength(3);
    expect((await records(testPrincipal(), { source: 'payroll_novelties' })).body.data.payrollRecords.rows).toHaveLength(0);
    expect(await payroll.call('payroll.novelties.delete', { id: made.output.novelty.id }, testPrincipal())).toMatchObject({ code: 'not_found' });
    expect((await payroll.call('payroll.novelties.delete', { id: made.output.novelty.id }, owner)).output).toEqual({ deleted: made.output.novelty.id });
    expect(await payroll.call('payroll.novelties.delete', { id: made.output.novelty.id }, owner)).toMatchObject({ code: 'not_found' });
  });

  it('refuses novelties outside the contract, misshapen ones and overlapping absences, with the field', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { hire_date: '2026-02-10' });
    const call = (input: Record<string, unknown>) => payroll.call('payroll.novelties.create', { employee_id: e.id, ...input }, owner);
    expect(await call({ type: 'commission', date: '2026-02-09', amount: 100 })).toMatchObject({ code: 'invalid_input', field: '/date' });
    expect(await call({ type: 'sick_leave', from: '2026-02-08', to: '2026-02-12' })).toMatchObject({ code: 'invalid_input', field: '/from' });
    expect(await call({ type: 'overtime', date: '2026-02-12', hours: 2 })).toMatchObject({ code: 'invalid_input', field: '/hour_kind' });
    expect(await call({ type: 'overtime', hour_kind: 'night', date: '2026-02-12', hours: 2.001 })).toMatchObject({ code: 'invalid_input', field: '/hours' });
    expect(await call({ type: 'commission', date: '2026-02-12' })).toMatchObject({ code: 'invalid_input', field: '/amount' });
    expect(await call({ type: 'commission', from: '2026-02-12', to: '2026-02-13', amount: 1 })).toMatchObject({ code: 'invalid_input', field: '/date' });
    expect(await call({ type: 'leave', from: '2026-02-12', to: '2026-02-13' })).toMatchObject({ code: 'invalid_input', field: '/paid' });
    expect(await call({ type: 'vacations', from: '2026-02-16', to: '2026-02-17', days: 3 })).toMatchObject({ code: 'invalid_input', field: '/days' });
    expect(await call({ type: 'sick_leave', from: '2026-02-13', to: '2026-02-12' })).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect(await call({ type: 'holiday', date: '2026-02-12' })).toMatchObject({ code: 'invalid_input', field: '/type' });
    expect((await call({ type: 'sick_leave', from: '2026-02-12', to: '2026-02-14' })).ok).toBe(true);
    expect(await call({ type: 'leave', paid: true, from: '2026-02-14', to: '2026-02-15' })).toMatchObject({ code: 'invalid_input', field: '/from' });
    expect(await payroll.call('payroll.novelties.create', { employee_id: e.id, type: 'loan', date: '2026-02-12', amount: 1 }, testPrincipal())).toMatchObject({ code: 'not_found' });
    await payroll.call('employees.terminate', { id: e.id, date: '2026-02-28', reason: 'end_of_term' }, owner);
    expect(await call({ type: 'garnishment', date: '2026-03-01', amount: 100 })).toMatchObject({ code: 'invalid_input', field: '/date' });
    expect(await call({ type: 'vacations', from: '2026-02-25', to: '2026-03-02', days: 3 })).toMatchObject({ code: 'invalid_input', field: '/to' });
  });
});

describe('a run for two employees, March 2026', () => {
  // A: one minimum wage (175_090_500) with transport allowance, 2 hours of day overtime on Tue 10 Mar.
  // B: five minimum wages (875_452_500). The employer qualifies for ET 114-1 (the default).
  const owner = testPrincipal();
  let a: { id: string };
  let b: { id: string };
  let run: any;

  beforeAll(async () => {
    a = await hire(owner, { name: 'Ana Mínimo' });
    b = await hire(owner, { name: 'Bruno Cinco', salary: { amount: 875_452_500, currency: 'COP' } });
    expect((await payroll.call('payroll.novelties.create', { employee_id: a.id, type: 'overtime', hour_kind: 'overtime_day', date: '2026-03-10', hours: 2 }, owner)).ok).toBe(true);
    const r = await payroll.call('payroll.run', { month: '2026-03' }, owner);
    expect(r.ok).toBe(true);
    run = r.output;
  });

  it('pays the minimum-wage employee with the overtime and the transport allowance', () => {
    const slip = run.payslips.find((p: any) => p.employee_id === a.id);
    // Overtime: divisor 220 (44 h a week in March 2026); 175_090_500 × 1.25 × 2 / 220 = 1_989_664.77 → 1_989_665.
    // Earnings = 175_090_500 + 1_989_665 + 24_909_500 = 201_989_665.
    expect(amounts(slip.earnings)).toEqual({ salary: 175_090_500, overtime_day: 1_989_665, transport_allowance: 24_909_500 });
    // IBC = 177_080_165 → up to the peso 177_080_200; health 4 % = 70.832,08 → 70.832 (7_083_200); pension the same.
    // Net = 201_989_665 − 14_166_400 = 187_823_265.
    expect(slip.ibc.health_pension).toBe(177_080_200);
    expect(amounts(slip.employee_contributions)).toEqual({ health: 7_083_200, pension: 7_083_200 });
    expect(slip.totals.net).toBe(187_823_265);
    // PILA on 1.770.802: health (employee's 4 % only, 114-1) 70.832,08 → 70.900, employer 68; pension 16 % = 283.328,32
    // → 283.400, employer 283.400 − 70.832 = 212.568; ARL I 0,522 % = 9.243,59 → 9.300; family fund 4 % → 70.900;
    // ICBF, SENA 0. Employer total 68 + 212.568 + 9.300 + 70.900 = 292.836 (29_283_600).
    expect(amounts(slip.employer_contributions)).toEqual({ health: 6_800, pension: 21_256_800, arl: 930_000, family_fund: 7_090_000, icbf: 0, sena: 0 });
    expect(slip.pila.map((l: any) => [l.subsystem, l.amount])).toEqual([['health', 7_090_000], ['pension', 28_340_000], ['arl', 930_000], ['family_fund', 7_090_000], ['icbf', 0], ['sena', 0]]);
    // Provisions: base 175_090_500 + 1_989_665 + 24_909_500 = 201_989_665; severance /12 = 16_832_472.08 → 16_832_472;
    // interest 12 % = 2_019_896.65 → 2_019_897; bonus 16_832_472; vacations 175_090_500 × 15/360 = 7_295_437.5 → 7_295_438.
    expect(amounts(slip.provisions)).toEqual({ severance: 16_832_472, severance_interest: 2_019_897, service_bonus: 16_832_472, vacations: 7_295_438 });
  });

  it('pays the five-minimum-wage employee with the solidarity fund', () => {
    const slip = run.payslips.find((p: any) => p.employee_id === b.id);
    // 875_452_500: health and pension 4 % = 350.181 each; solidarity 1 % = 87.545,25 → 87.545 (8_754_500).
    // Net = 875_452_500 − 78_790_700 = 796_661_800. PILA: health 350.181 → 350.200 (employer 19; 5 < 10 SMMLV, exempt);
    // pension 1.400.724 → 1.400.800 (employer 1.050.619); solidarity 87.545,25 → 87.600 (employer 55);
    // ARL 45.698,62 → 45.700; family fund 350.181 → 350.200; ICBF, SENA 0.
    // Employer = 19 + 1.050.619 + 55 + 45.700 + 350.200 = 1.446.593 (144_659_300).
    expect(amounts(slip.employee_contributions)).toEqual({ health: 35_018_100, pension: 35_018_100, solidarity_fund: 8_754_500 });
    expect(slip.totals).toMatchObject({ earnings: 875_452_500, net: 796_661_800, employer_contributions: 144_659_300 });
    // Provisions: severance 875_452_500 / 12 = 72_954_375; interest 8_754_525; bonus 72_954_375; vacations 36_477_187.5 → 36_477_188.
    expect(slip.totals.provisions).toBe(191_140_463);
  });

  it('totals the run and writes a balanced journal entry on PUC accounts', () => {
    // Earnings 201_989_665 + 875_452_500 = 1_077_442_165; employee contributions 14_166_400 + 78_790_700 = 92_957_100;
    // net 187_823_265 + 796_661_800 = 984_485_065; employer 29_283_600 + 144_659_300 = 173_942_900;
    // provisions (16_832_472 + 2_019_897 + 16_832_472 + 7_295_438 = 42_980_279) + 191_140_463 = 234_120_742.
    expect(run.run).toMatchObject({ status: 'computed', period: { from: '2026-03-01', to: '2026-03-31' }, frequency: 'monthly' });
    expect(run.run.totals).toEqual({ employees: 2, earnings: 1_077_442_165, employee_contributions: 92_957_100, deductions: 0, net: 984_485_065, employer_contributions: 173_942_900, provisions: 234_120_742, settlement: 0 });
    const je = run.run.journal_entry;
    // Σ debits = earnings + employer + provisions = 1_077_442_165 + 173_942_900 + 234_120_742 = 1_485_505_807 = Σ credits.
    expect(je).toMatchObject({ id: `je_${run.run.id}`, date: '2026-03-31', currency: 'COP', total_debit: 1_485_505_807, total_credit: 1_485_505_807, posted: false });
    const byAccount = Object.fromEntries(je.lines.map((l: any) => [`${l.account}${l.debit ? 'D' : 'C'}`, l.debit || l.credit]));
    expect(byAccount).toEqual({
      '510506D': 1_050_543_000, // salaries 175_090_500 + 875_452_500
      '510515D': 1_989_665, // overtime
      '510527D': 24_909_500, // transport allowance
      '510530D': 16_832_472 + 72_954_375, '510533D': 2_019_897 + 8_754_525, '510536D': 16_832_472 + 72_954_375, '510539D': 7_295_438 + 36_477_188,
      '510568D': 930_000 + 4_570_000, '510570D': 21_256_800 + 105_061_900 + 5_500, '510572D': 7_090_000 + 35_020_000,
      '510569D': 6_800 + 1_900, // health: the employer's rate is 0 (114-1), its share only PILA's approximation
      // Each administrator's payable is what PILA declares for it (Decreto 1990 de 2016), employee and employer shares together:
      '237005C': 7_090_000 + 35_020_000, // health: 7_083_200 + 35_018_100 withheld + 6_800 + 1_900 borne
      '237006C': 930_000 + 4_570_000, // ARL
      '237010C': 7_090_000 + 35_020_000, // family fund
      '238030C': 28_340_000 + 140_080_000 + 8_760_000, // pension A and B, and B's solidarity fund = 177_180_000
      '250505C': 984_485_065, // net pay
      '261005C': 89_786_847, '261010C': 10_774_422, '261015C': 43_772_626, '261020C': 89_786_847,
    });
  });

  it('lists the run and its payslips (ref = run id, default the latest), sealed to the workspace', async () => {
    const runs = (await records(owner, { source: 'payroll_runs' })).body.data.payrollRecords;
    expect(runs.rows.map((r: any) => r.id)).toEqual([run.run.id]);
    const slips = (await records(owner, { source: 'payslips' })).body.data.payrollRecords;
    expect(slips).toMatchObject({ source: 'payslips', total: 2 });
    expect(slips.rows.map((r: any) => r.name)).toEqual(['Ana Mínimo', 'Bruno Cinco']);
    const paged = (await records(owner, { source: 'payslips', ref: run.run.id, limit: 1 })).body.data.payrollRecords;
    expect(paged.rows.map((r: any) => r.name)).toEqual(['Ana Mínimo']);
    const next = (await records(owner, { source: 'payslips', ref: run.run.id, limit: 1, cursor: paged.next_cursor })).body.data.payrollRecords;
    expect(next.rows.map((r: any) => r.name)).toEqual(['Bruno Cinco']);
    const other = testPrincipal();
    expect((await records(other, { source: 'payslips' })).body.data.payrollRecords.rows).toEqual([]);
    expect((await records(other, { source: 'payroll_runs' })).body.data.payrollRecords.rows).toEqual([]);
    expect((await records(other, { source: 'payslips', ref: run.run.id })).body.errors[0].extensions.code).toBe('not_found');
    for (const tool of ['payroll.post', 'payroll.void']) expect(await payroll.call(tool, { id: run.run.id }, other)).toMatchObject({ code: 'not_found' });
    expect(await payroll.call('payroll.approve', { id: run.run.id, amount: 984_485_065 }, other)).toMatchObject({ code: 'not_found' });
  });

  it('refuses a second run of an overlapping period, a post before approval, and a wrong amount', async () => {
    expect(await payroll.call('payroll.run', { month: '2026-03' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.run', { month: '2026-03', frequency: 'second_half' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.run', { month: '2026-13' }, owner)).toMatchObject({ code: 'invalid_input', field: '/month' });
    expect(await payroll.call('payroll.post', { id: run.run.id }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.approve', { id: run.run.id, amount: 984_485_064 }, owner)).toMatchObject({ code: 'invalid_input', field: '/amount' });
  });

  it('is held for approval by an amount_over policy on the net pay, then approved and posted once', async () => {
    await payroll.governance.policies.create(owner.workspace, { name: 'Nómina grande', priority: 5, match: { tools: ['payroll.approve'] }, conditions: { amount_over: 500_000_000 }, effect: 'hold' }, newId('pol'));
    const held = await payroll.call('payroll.approve', { id: run.run.id, amount: 984_485_065 }, owner);
    expect(held).toMatchObject({ pending: true, httpStatus: 202 });
    expect(held.approvalId).toMatch(/^apr_/);
    // Still computed: nothing ran.
    expect((await records(owner, { source: 'payroll_runs', status: 'computed' })).body.data.payrollRecords.rows).toHaveLength(1);
    // A person approves it; the held call then runs exactly once.
    expect(await payroll.governance.approvals.decide(owner.workspace, held.approvalId!, 'approved', { type: 'member', id: newId('mem') }, null)).not.toBeNull();
    await payroll.sweep();
    const approvedRuns = (await records(owner, { source: 'payroll_runs', status: 'approved' })).body.data.payrollRecords;
    expect(approvedRuns.rows.map((r: any) => r.id)).toEqual([run.run.id]);
    // Novelties of an approved period are closed.
    expect(await payroll.call('payroll.novelties.create', { employee_id: a.id, type: 'commission', date: '2026-03-12', amount: 100 }, owner)).toMatchObject({ code: 'conflict' });
    const posted = await payroll.call('payroll.post', { id: run.run.id }, owner);
    expect(posted.output.run).toMatchObject({ status: 'posted', journal_entry: { posted: true, total_debit: 1_485_505_807 } });
    expect(posted.output.run.posted_at).toMatch(/^\d{4}-/);
    expect(await payroll.call('payroll.post', { id: run.run.id }, owner)).toMatchObject({ code: 'conflict' });
    // Its entry is in payroll's journal feed (the finance journal pulls it: invoices test/payroll-journal.test.ts).
    const feed = (await records(owner, { source: 'payroll_journal' })).body.data.payrollRecords;
    expect(feed.rows).toMatchObject([{ id: `je_${run.run.id}`, kind: 'posting', date: '2026-03-31', total_debit: 1_485_505_807, total_credit: 1_485_505_807 }]);
    expect((await records(testPrincipal(), { source: 'payroll_journal' })).body.data.payrollRecords.rows).toEqual([]);
  });
});

describe('a month paid in two halves (June 2026, one minimum wage)', () => {
  it('declares the month\'s PILA once: the second half books the month\'s figures less the first half\'s', async () => {
    const owner = testPrincipal();
    await hire(owner, { name: 'Carla Quincena' });
    const first = await payroll.call('payroll.run', { month: '2026-06', frequency: 'first_half' }, owner);
    const h1 = first.output.payslips[0];
    // 1–15 June: salary 87_545_250 + transport 12_454_750. IBC: the floor for 15 days, 875.452,50, up to the peso 875.453.
    // PILA on its own: health 4 % = 35.018,12 → 35.100 (employee 35.018, employer 82); pension 16 % = 140.072,48 → 140.100
    // (employer 105.082); ARL 0,522 % = 4.569,86 → 4.600; family fund 4 % → 35.100. Net 100_000_000 − 7_003_600 = 92_996_400.
    expect(h1.pila.map((l: any) => [l.subsystem, l.amount, l.employee, l.employer])).toEqual([
      ['health', 3_510_000, 3_501_800, 8_200], ['pension', 14_010_000, 3_501_800, 10_508_200], ['arl', 460_000, 0, 460_000],
      ['family_fund', 3_510_000, 0, 3_510_000], ['icbf', 0, 0, 0], ['sena', 0, 0, 0],
    ]);
    expect(h1.totals.net).toBe(92_996_400);
    await payroll.call('payroll.approve', { id: first.output.run.id, amount: 92_996_400 }, owner);
    await payroll.call('payroll.post', { id: first.output.run.id }, owner);
    const second = await payroll.call('payroll.run', { month: '2026-06', frequency: 'second_half' }, owner);
    const h2 = second.output.payslips[0];
    // The month: IBC 1.750.905; PILA health 70.100 (employee 70.036, employer 64), pension 280.200 (employee 70.036,
    // employer 210.164), ARL 9.200, family fund 70.100. The second half books the month less the first half:
    // health 70.100 − 35.100 = 35.000, employee 70.036 − 35.018 = 35.018, employer 64 − 82 = −18 (the first half's
    // approximation given back); pension 140.100 (employee 35.018, employer 105.082); ARL 4.600; family fund 35.000.
    expect(h2.pila.map((l: any) => [l.subsystem, l.amount, l.employee, l.employer])).toEqual([
      ['health', 3_500_000, 3_501_800, -1_800], ['pension', 14_010_000, 3_501_800, 10_508_200], ['arl', 460_000, 0, 460_000],
      ['family_fund', 3_500_000, 0, 3_500_000], ['icbf', 0, 0, 0], ['sena', 0, 0, 0],
    ]);
    // Its IBC is the month's less the first half's: 1.750.905 − 875.453 = 875.452. Net again 92_996_400.
    expect(h2.ibc.health_pension).toBe(87_545_200);
    expect(h2.totals.net).toBe(92_996_400);
    // Together each subsystem is the month's declared figure, and so are the payables of the two entries.
    for (const l of h1.pila) expect(l.amount + h2.pila.find((x: any) => x.subsystem === l.subsystem).amount).toBe(({ health: 7_010_000, pension: 28_020_000, arl: 920_000, family_fund: 7_010_000, icbf: 0, sena: 0 } as any)[l.subsystem]);
    const side = (je: any, account: string) => je.lines.filter((l: any) => l.account === account).reduce((t: number, l: any) => t + l.credit - l.debit, 0);
    for (const [account, month] of [['237005', 7_010_000], ['238030', 28_020_000], ['237006', 920_000], ['237010', 7_010_000], ['510569', -6_400]] as const) {
      expect(side(first.output.run.journal_entry, account) + side(second.output.run.journal_entry, account)).toBe(month);
    }
    // The second half's health expense is a credit of 18 pesos: 510569 C 1_800; its payable the net 3_500_000.
    expect(second.output.run.journal_entry.lines.filter((l: any) => ['510569', '237005'].includes(l.account)).map((l: any) => [l.account, l.debit, l.credit]))
      .toEqual([['237005', 0, 3_500_000], ['510569', 0, 1_800]]);
    // The halves run in order: the first is not run again, nor voided, while the second is live.
    expect(await payroll.call('payroll.void', { id: first.output.run.id }, owner)).toMatchObject({ code: 'conflict' });
    expect((await payroll.call('payroll.void', { id: second.output.run.id }, owner)).output.run.status).toBe('void');
    expect((await payroll.call('payroll.void', { id: first.output.run.id }, owner)).output.run.status).toBe('void');
    const secondAlone = await payroll.call('payroll.run', { month: '2026-06', frequency: 'second_half' }, owner);
    expect(await payroll.call('payroll.run', { month: '2026-06', frequency: 'first_half' }, owner)).toMatchObject({ code: 'conflict' });
    // Without a first half, the second is a period of its own: 15 days declared on their own.
    expect(secondAlone.output.payslips[0].pila[0]).toMatchObject({ subsystem: 'health', amount: 3_510_000 });
  });
});

describe('payroll.void', () => {
  it('voids a computed run, frees the period, and lets a half-month run follow', async () => {
    const owner = testPrincipal();
    await hire(owner);
    const first = await payroll.call('payroll.run', { month: '2026-04' }, owner);
    const voided = await payroll.call('payroll.void', { id: first.output.run.id, reason: 'Faltó una novedad' }, owner);
    expect(voided.output.run).toMatchObject({ status: 'void', void_reason: 'Faltó una novedad' });
    expect(await payroll.call('payroll.void', { id: first.output.run.id }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.approve', { id: first.output.run.id, amount: first.output.run.totals.net }, owner)).toMatchObject({ code: 'conflict' });
    // First half of April: 15 days of the minimum wage = 87_545_250; transport 12_454_750.
    const half = await payroll.call('payroll.run', { month: '2026-04', frequency: 'first_half' }, owner);
    expect(half.output.run.period).toEqual({ from: '2026-04-01', to: '2026-04-15' });
    expect(amounts(half.output.payslips[0].earnings)).toEqual({ salary: 87_545_250, transport_allowance: 12_454_750 });
    const slips = (await records(owner, { source: 'payslips' })).body.data.payrollRecords;
    expect(slips.rows[0].run_id).toBe(half.output.run.id);
    // An approved run can still be voided.
    const approved = await payroll.call('payroll.approve', { id: half.output.run.id, amount: half.output.run.totals.net }, owner);
    expect(approved.output.run.status).toBe('approved');
    expect((await payroll.call('payroll.void', { id: half.output.run.id }, owner)).output.run.status).toBe('void');
  });

  it('refuses a run with nobody under contract, and a year without parameters', async () => {
    const owner = testPrincipal();
    expect(await payroll.call('payroll.run', { month: '2026-04' }, owner)).toMatchObject({ code: 'conflict' });
    await hire(owner);
    expect(await payroll.call('payroll.run', { month: '2028-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/month' });
  });
});
