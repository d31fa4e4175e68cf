import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../src/server.ts';
import { employees } from '../src/modules/employees/model.ts';

let payroll: TestSubgraph;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

let n = 0;
async function hire(owner: ReturnType<typeof testPrincipal>, overrides: Record<string, unknown>) {
  n += 1;
  const r = await payroll.call('employees.create', {
    name: `Person ${n}`, document: { type: 'CC', number: String(2_000_000_000 + n) }, position: 'Analista', hire_date: '2026-03-02',
    salary: { amount: 350_000_000, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1, ...overrides,
  }, owner);
  expect(r.ok).toBe(true);
  return r.output.employee as { id: string };
}
const records = (p: unknown, q: unknown) => payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q }, p as never);
const metric = (p: unknown, q: unknown) => payroll.graphql('query($q: JSON!) { payrollMetric(query: $q) }', { q }, p as never);

describe('payrollRecords (records.list for employees)', () => {
  it('lists newest first, filters by status and searches name, position and e-mail case-insensitively', async () => {
    const owner = testPrincipal();
    await hire(owner, { name: 'Carla Ruiz', position: 'Tesorera', email: 'carla@acme.co' });
    const ana = await hire(owner, { name: 'Ana Pérez', position: 'Contadora' });
    await hire(owner, { name: 'Bruno Díaz', position: 'Vendedor', contract_type: 'service' });
    await employees(payroll.db).updateOne({ _id: ana.id }, { $set: { status: 'terminated' } });
    const all = (await records(owner, { source: 'employees' })).body.data.payrollRecords;
    expect(all).toMatchObject({ source: 'employees', total: 3 });
    expect(all.rows.map((r: any) => r.name)).toEqual(['Bruno Díaz', 'Ana Pérez', 'Carla Ruiz']);
    expect(all.rows[1]).toEqual({ id: ana.id, name: 'Ana Pérez', position: 'Contadora', email: null, hire_date: '2026-03-02', contract_type: 'indefinite', status: 'terminated' });
    expect(all.rows[1].salary).toBeUndefined();
    const active = (await records(owner, { source: 'employees', status: 'active' })).body.data.payrollRecords;
    expect(active.rows.map((r: any) => r.name)).toEqual(['Bruno Díaz', 'Carla Ruiz']);
    expect((await records(owner, { source: 'employees', search: 'TESOR' })).body.data.payrollRecords.rows.map((r: any) => r.name)).toEqual(['Carla Ruiz']);
    expect((await records(owner, { source: 'employees', search: 'acme.CO' })).body.data.payrollRecords.rows).toHaveLength(1);
    const limited = (await records(owner, { source: 'employees', limit: 1 })).body.data.payrollRecords;
    expect(limited).toMatchObject({ total: 3 });
    expect(limited.rows).toHaveLength(1);
  });

  it('refuses what does not fit with the contract code and a JSON Pointer', async () => {
    const owner = testPrincipal();
    const cases: [unknown, string][] = [
      [{ source: 'employees', status: 'fired' }, '/status'],
      [{ source: 'employees', limit: 101 }, '/limit'],
      [{ source: 'employees', kind: 'x' }, '/kind'],
      [{ source: 'employees', ref: 'emp_1' }, '/ref'],
      [{ source: 'invoices' }, '/source'],
      [{ source: 'employees', extra: 1 }, '/extra'],
    ];
    for (const [q, field] of cases) {
      const r = await records(owner, q);
      expect(r.body.errors[0].extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field });
    }
  });

  it('answers only the caller\'s workspace, and only to a caller who reaches employees', async () => {
    const a = testPrincipal();
    const b = testPrincipal();
    await hire(a, { name: 'Solo de A' });
    expect((await records(b, { source: 'employees' })).body.data.payrollRecords).toEqual({ source: 'employees', rows: [], total: 0 });
    expect((await metric(b, { metric: 'payroll_employees' })).body.data.payrollMetric.summary.value).toBe(0);
    const narrowed = { ...a, patterns: ['invoices.%'] };
    expect((await records(narrowed, { source: 'employees' })).body.errors[0].extensions.code).toBe('policy_denied');
  });
});

describe('payrollMetric (metrics.query payroll_employees)', () => {
  it('counts active employees, hires per bucket by hire date and active ones by contract type', async () => {
    const owner = testPrincipal();
    await hire(owner, { hire_date: '2026-01-05' });
    await hire(owner, { hire_date: '2026-01-20', contract_type: 'fixed_term', term_end: '2026-12-31' });
    const gone = await hire(owner, { hire_date: '2026-02-10' });
    await hire(owner, { hire_date: '2026-03-31', contract_type: 'service', salary: { amount: 100_000_00, currency: 'COP' } });
    await hire(owner, { hire_date: '2025-12-15' }); // before the window
    await employees(payroll.db).updateOne({ _id: gone.id }, { $set: { status: 'terminated' } });
    const r = (await metric(owner, { metric: 'payroll_employees', from: '2026-01-01', to: '2026-03-31', interval: 'month', compare: 'previous_period', target: 10 })).body.data.payrollMetric;
    expect(r).toMatchObject({ metric: 'payroll_employees', unit: 'count', summary: { value: 4, target: 10 } });
    expect(r.series).toEqual([
      { period: '2026-01-01', period_end: '2026-01-31', value: 2, previous: 0 },
      { period: '2026-02-01', period_end: '2026-02-28', value: 1, previous: 0 },
      // The previous 90 days are 2025-10-03 … 2025-12-31, bucketed the same way: the December hire.
      { period: '2026-03-01', period_end: '2026-03-31', value: 1, previous: 1 },
    ]);
    expect(r.rows).toEqual([
      { contract_type: 'indefinite', count: 2 }, { contract_type: 'fixed_term', count: 1 }, { contract_type: 'apprenticeship', count: 0 }, { contract_type: 'service', count: 1 },
    ]);
    // Default window: 90 days ending today, one point per day.
    const byDay = (await metric(owner, { metric: 'payroll_employees' })).body.data.payrollMetric;
    expect(byDay.series).toHaveLength(90);
    expect(byDay.series.at(-1).period).toBe(localDate(new Date()));
  });

  it('refuses what does not fit with the contract code and a JSON Pointer', async () => {
    const owner = testPrincipal();
    const cases: [unknown, string][] = [
      [{ metric: 'revenue' }, '/metric'],
      [{ metric: 'payroll_employees', from: '2026-01-01' }, '/to'],
      [{ metric: 'payroll_employees', from: '2026-02-01', to: '2026-01-01' }, '/from'],
      [{ metric: 'payroll_employees', days: 400 }, '/days'],
      [{ metric: 'payroll_employees', interval: 'year' }, '/interval'],
    ];
    for (const [q, field] of cases) {
      const r = await metric(owner, q);
      expect(r.body.errors[0].extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field });
    }
  });
});
