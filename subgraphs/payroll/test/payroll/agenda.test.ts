import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';

/**
 * The `recurring` agenda lane's payroll dates (issue 18): the pay date of each period at the
 * workspace's frequency, with the period's run when there is one. The gateway merges this lane
 * with invoices' recurring schedules (catalog `also`; shared/test/reads.test.ts).
 */
let payroll: TestSubgraph;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

type P = ReturnType<typeof testPrincipal>;
const lane = async (p: P, w: Record<string, unknown>) => {
  const r = await payroll.graphql('query($w: JSON!) { payrollAgenda(lane: "recurring", window: $w) }', { w: { limit: 100, ...w } }, p);
  if (r.body.errors) return { error: r.body.errors[0].extensions };
  return r.body.data.payrollAgenda as { date: string; status: string; title: string; amount?: number; ref: { run_id: string | null; frequency: string } }[];
};

describe('the recurring lane: payroll dates', () => {
  // The dates below assume the test runs on or after 2026-11-01 and before 2026-12-15 (the
  // product's "today" is the real clock): the statuses depend on it.
  const today = localDate(new Date());
  const inRange = today >= '2026-11-01' && today < '2026-12-15';

  it('shows the month-end pay dates of a workspace with people under contract, monthly before any run', async () => {
    const owner = testPrincipal();
    expect(await lane(owner, { from: '2026-11-01', to: '2026-12-31' })).toEqual([]);
    const e = await payroll.call('employees.create', {
      name: 'Ana Mínimo', document: { type: 'CC', number: '1023456700' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner);
    expect(e.ok).toBe(true);
    const entries = await lane(owner, { from: '2026-11-01', to: '2026-12-31', overdue: false }) as any[];
    expect(entries.map((x) => [x.date, x.title, x.ref.run_id])).toEqual([
      ['2026-11-30', 'Pago de nómina de noviembre 2026', null],
      ['2026-12-31', 'Pago de nómina de diciembre 2026', null],
    ]);
    if (inRange) expect(entries.map((x) => x.status)).toEqual(['open', 'open']);
    // With overdue, unpaid periods that ended up to 45 days before the window: 17 Sep – 31 Oct → 30 Sep, 31 Oct.
    const late = await lane(owner, { from: '2026-11-01', to: '2026-12-31', overdue: true }) as any[];
    expect(late.map((x) => [x.date, x.status])).toEqual([['2026-09-30', 'overdue'], ['2026-10-31', 'overdue'], ['2026-11-30', inRange ? 'open' : late[2].status], ['2026-12-31', inRange ? 'open' : late[3].status]]);
    // Another workspace sees nothing; limit holds; an unknown lane is refused.
    expect(await lane(testPrincipal(), { from: '2026-11-01', to: '2026-12-31' })).toEqual([]);
    expect(await lane(owner, { from: '2026-09-01', to: '2026-12-31', overdue: false, limit: 2 })).toHaveLength(2);
    const refused = await payroll.graphql('query($w: JSON!) { payrollAgenda(lane: "tax", window: $w) }', { w: { from: '2026-11-01', to: '2026-12-31', limit: 10 } }, owner);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/sources' });
  });

  it('follows the frequency of the latest run and shows each period\'s run', async () => {
    const owner = testPrincipal();
    expect((await payroll.call('employees.create', {
      name: 'Beto Quincena', document: { type: 'CC', number: '1023456701' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner)).ok).toBe(true);
    const run = await payroll.call('payroll.run', { month: '2026-10', frequency: 'first_half' }, owner);
    // First half of October: salary 15/30 × 175_090_500 = 87_545_250; transport 12_454_750; earnings 100_000_000.
    // IBC: the floor for 15 days, 875.452,50, up to the peso 875.453 (87_545_300); health 4 % = 35.018,12 → half up
    // to the peso 35.018 (3_501_800); pension the same; net = 100_000_000 − 7_003_600 = 92_996_400.
    expect(run.output.run.totals.net).toBe(92_996_400);
    const id = run.output.run.id;
    expect((await payroll.call('payroll.approve', { id, amount: 92_996_400 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id }, owner)).ok).toBe(true);
    const entries = await lane(owner, { from: '2026-10-01', to: '2026-11-30', overdue: false }) as any[];
    expect(entries.map((x) => [x.date, x.ref.frequency, x.ref.run_id, x.amount ?? null])).toEqual([
      ['2026-10-15', 'first_half', id, 92_996_400],
      ['2026-10-31', 'second_half', null, null],
      ['2026-11-15', 'first_half', null, null],
      ['2026-11-30', 'second_half', null, null],
    ]);
    expect(entries[0]).toMatchObject({ status: 'done', title: 'Pago de nómina, primera quincena de octubre 2026', ref: { run_status: 'posted' } });
    expect(entries[1].status).toBe('overdue');
    // With overdue, 45 days back (from 17 Sep): 30 Sep and 31 Oct were never run and show; 15 Oct
    // was paid and does not; 15 Sep ended before the 45 days.
    const late = await lane(owner, { from: '2026-11-01', to: '2026-11-30', overdue: true }) as any[];
    expect(late.map((x) => x.date)).toEqual(['2026-09-30', '2026-10-31', '2026-11-15', '2026-11-30']);
  });
});
