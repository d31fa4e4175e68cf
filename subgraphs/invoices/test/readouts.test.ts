import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { agingBucket, agingBuckets } from '../src/books/aging.ts';
import { buckets, changeBps, previousWindow, queryWindow, splitByMonths } from '../src/books/calendar.ts';
import { backfillInvoicesDue, invoicesDue } from '../src/modules/invoices/due.ts';
import { andina, configuredWorkspace, draft, party, startInvoices } from './setup.ts';

describe('periods', () => {
  it('builds calendar buckets clipped to the window', () => {
    expect(buckets({ from: '2026-11-01', to: '2026-11-03' }, 'day').map((b) => b.period)).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    // 2026-11-01 is a Sunday: the first ISO week is clipped to that one day.
    expect(buckets({ from: '2026-11-01', to: '2026-11-15' }, 'week')).toEqual([
      { period: '2026-11-01', period_end: '2026-11-01' }, { period: '2026-11-02', period_end: '2026-11-08' }, { period: '2026-11-09', period_end: '2026-11-15' },
    ]);
    expect(buckets({ from: '2026-10-15', to: '2026-12-02' }, 'month')).toEqual([
      { period: '2026-10-15', period_end: '2026-10-31' }, { period: '2026-11-01', period_end: '2026-11-30' }, { period: '2026-12-01', period_end: '2026-12-02' },
    ]);
    expect(queryWindow({}, '2026-11-30')).toEqual({ from: '2026-09-02', to: '2026-11-30' });
    expect(queryWindow({ days: 7 }, '2026-11-30')).toEqual({ from: '2026-11-24', to: '2026-11-30' });
    expect(previousWindow({ from: '2026-11-01', to: '2026-11-30' }, 'previous_period')).toEqual({ from: '2026-10-02', to: '2026-10-31' });
    expect(previousWindow({ from: '2024-02-29', to: '2024-03-31' }, 'previous_year')).toEqual({ from: '2023-02-28', to: '2023-03-31' });
    expect(splitByMonths('2026-10-15', '2027-01-10')).toEqual({ days: [{ from: '2026-10-15', to: '2026-10-31' }, { from: '2027-01-01', to: '2027-01-10' }], months: { from: '2026-11', to: '2026-12' } });
    expect(splitByMonths('2026-11-03', '2026-11-20')).toEqual({ days: [{ from: '2026-11-03', to: '2026-11-20' }], months: null });
    expect(changeBps(150, 100)).toBe(5000);
    expect(changeBps(50, 100)).toBe(-5000);
    expect(changeBps(50, 0)).toBeUndefined();
  });

  it('ages by days past due at as_of, counting only what was open then', () => {
    expect(['2026-11-30', '2026-11-29', '2026-10-31', '2026-10-30', '2026-09-01', '2026-08-31'].map((d) => agingBucket(d, '2026-11-30')))
      .toEqual(['current', '1_30', '1_30', '31_60', '61_90', 'over_90']);
    const aging = agingBuckets([
      { amount_due: 1000, issue_date: '2026-10-01', due_date: '2026-10-15', settlements: [{ date: '2026-11-01', amount: 400 }, { date: '2026-12-01', amount: 600 }] },
      { amount_due: 500, issue_date: '2026-12-01', due_date: '2026-12-31', settlements: [] },
    ], '2026-11-30');
    expect(aging.rows.find((r) => r.bucket === '31_60')).toEqual({ bucket: '31_60', value: 600, count: 1 });
    expect(aging.total).toBe(600);
  });
});

describe('invoicesMetric and invoicesRecords over GraphQL', () => {
  let sg: TestSubgraph;
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });
  const metric = (owner: any, query: unknown) => sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: query }, owner);
  const records = (owner: any, query: unknown) => sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner);

  it('revenue per week with a previous period, equal to the documents', async () => {
    const owner = await configuredWorkspace(sg);
    const mk = async (issue: string, price: number) => {
      const d = await draft(sg, owner, { issue_date: issue, due_date: issue, lines: [{ description: 'x', quantity: 1, unit_price: price, tax_rate_ppm: 190000 }] });
      await sg.call('invoices.post', { id: d.id }, owner);
    };
    await mk('2026-10-20', 1000); // previous period
    await mk('2026-11-03', 2000);
    await mk('2026-11-10', 3000);
    await mk('2026-11-11', 500);
    const r = (await metric(owner, { metric: 'revenue', from: '2026-11-02', to: '2026-11-15', interval: 'week', compare: 'previous_period' })).body.data.invoicesMetric;
    expect(r).toMatchObject({ metric: 'revenue', unit: 'money', currency: 'COP', summary: { value: 5500, previous: 1000, change_bps: 45000 } });
    expect(r.series).toEqual([
      { period: '2026-11-02', period_end: '2026-11-08', value: 2000, previous: 1000 },
      { period: '2026-11-09', period_end: '2026-11-15', value: 3500, previous: 0 },
    ]);
    const status = (await metric(owner, { metric: 'invoices_status', from: '2026-11-01', to: '2026-11-30' })).body.data.invoicesMetric;
    expect(status.rows).toContainEqual({ status: 'posted', count: 3 });
    expect(status.summary.value).toBe(3);
    const out = (await metric(owner, { metric: 'ar_outstanding', from: '2026-11-01', to: '2026-11-30', interval: 'month' })).body.data.invoicesMetric;
    expect(out.summary.value).toBe((1000 + 2000 + 3000 + 500) * 119 / 100);
    expect(out.series).toEqual([{ period: '2026-11-01', period_end: '2026-11-30', value: 7735 }]);
  });

  it('ages from the rollups exactly as a hand calculation over the invoices, at any as_of', async () => {
    const owner = await configuredWorkspace(sg);
    const made: any[] = [];
    const plan = [
      ['2026-06-01', '2026-06-15', 100000], ['2026-08-20', '2026-09-05', 200000], ['2026-09-10', '2026-10-10', 300000],
      ['2026-10-01', '2026-10-20', 400000], ['2026-11-01', '2026-11-30', 500000], ['2026-11-15', '2027-01-15', 600000],
    ] as const;
    for (const [issue, due, price] of plan) {
      const d = await draft(sg, owner, { issue_date: issue, due_date: due, lines: [{ description: 'x', quantity: 1, unit_price: price, tax_rate_ppm: 0 }] });
      made.push((await sg.call('invoices.post', { id: d.id }, owner)).output.invoice);
    }
    await sg.call('payments.register', { customer_id: await andina(owner), amount: 150000, currency: 'COP', date: '2026-10-05', invoices: [{ invoice_id: made[1].id }] }, owner);
    await sg.call('payments.register', { customer_id: await andina(owner), amount: 100000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: made[0].id }] }, owner);
    await sg.call('invoices.credit_note', { invoice_id: made[3].id, concept: 2, reason: 'anulada', issue_date: '2026-11-10' }, owner);
    for (const asOf of ['2026-09-30', '2026-10-31', '2026-11-12', '2026-11-30', '2027-03-01']) {
      const docs = await Promise.all(made.map(async (i) => (await sg.call('invoices.get', { id: i.id }, owner)).output.invoice));
      const hand = agingBuckets(docs, asOf);
      const r = (await metric(owner, { metric: 'ar_aging', as_of: asOf })).body.data.invoicesMetric;
      expect(r.rows, asOf).toEqual(hand.rows.map(({ bucket, value }) => ({ bucket, value })));
      expect(r.summary.value, asOf).toBe(hand.total);
    }
  });

  it('refuses bad queries with invalid_input and a field', async () => {
    const owner = testPrincipal();
    const ext = async (q: unknown) => (await metric(owner, q)).body.errors?.[0]?.extensions;
    // A metric another subgraph answers (payroll) is not this subgraph's.
    expect(await ext({ metric: 'payroll_employees' })).toMatchObject({ code: 'invalid_input', field: '/metric' });
    expect(await ext({ metric: 'revenue', from: '2026-11-01' })).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect(await ext({ metric: 'revenue', days: 400 })).toMatchObject({ code: 'invalid_input', field: '/days' });
    expect(await ext({ metric: 'revenue', interval: 'year' })).toMatchObject({ code: 'invalid_input', field: '/interval' });
    expect(await ext({ metric: 'revenue', from: '2026-11-02', to: '2026-11-01' })).toMatchObject({ code: 'invalid_input', field: '/from' });
    expect(await ext({ metric: 'top_customers', limit: 101 })).toMatchObject({ code: 'invalid_input', field: '/limit' });
    const rext = async (q: unknown) => (await records(owner, q)).body.errors?.[0]?.extensions;
    expect(await rext({ source: 'employees' })).toMatchObject({ code: 'invalid_input', field: '/source' });
    expect(await rext({ source: 'invoices', kind: 'receipt' })).toMatchObject({ code: 'invalid_input', field: '/kind' });
    expect(await rext({ source: 'invoices', status: 'open' })).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await rext({ source: 'invoices', limit: 0 })).toMatchObject({ code: 'invalid_input', field: '/limit' });
  });

  it('lists records newest first with kind, status and search, sealed per workspace and per module', async () => {
    const owner = await configuredWorkspace(sg);
    const a = await draft(sg, owner, { customer_id: await party(owner, { name: 'Cliente Uno', kind: 'customer' }) });
    await draft(sg, owner, { customer_id: await party(owner, { name: 'Cliente Dos', kind: 'customer' }) });
    await sg.call('invoices.post', { id: a.id }, owner);
    const all = (await records(owner, { source: 'invoices' })).body.data.invoicesRecords;
    expect(all).toMatchObject({ source: 'invoices', total: 2 });
    expect(all.rows.map((r: any) => r.customer_name)).toEqual(['Cliente Dos', 'Cliente Uno']);
    expect((await records(owner, { source: 'invoices', status: 'posted' })).body.data.invoicesRecords.rows).toHaveLength(1);
    expect((await records(owner, { source: 'invoices', search: 'dos', kind: 'invoice' })).body.data.invoicesRecords.rows).toHaveLength(1);
    expect((await records(testPrincipal(), { source: 'invoices' })).body.data.invoicesRecords.total).toBe(0);
    const narrowed = await records({ ...owner, patterns: ['invoices.%'] }, { source: 'payments' });
    expect(narrowed.body.errors[0].extensions.code).toBe('policy_denied');
    const agenda = await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "receivables", window: $w) }', { w: { from: '2026-11-01', to: '2026-12-31', limit: 100 } }, owner);
    expect(agenda.body.data.invoicesAgenda).toEqual([expect.objectContaining({ date: '2026-12-02', source: 'receivables', kind: 'deadline', amount: 35700000 })]);
    // The shared agenda field refuses a window it cannot answer, with the field at fault, before any reader runs.
    const laneError = async (lane: string, w: unknown) => (await sg.graphql('query($l: String!, $w: JSON!) { invoicesAgenda(lane: $l, window: $w) }', { l: lane, w }, owner)).body.errors?.[0]?.extensions;
    expect(await laneError('receivables', { from: '2026-12-31', to: '2026-11-01', limit: 10 })).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect(await laneError('receivables', { from: '2026-01-01', to: '2027-03-01', limit: 10 })).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect(await laneError('receivables', { from: '2026-13-01', to: '2026-12-01', limit: 10 })).toMatchObject({ code: 'invalid_input', field: '/from' });
    expect(await laneError('receivables', { from: '2026-11-01', to: '2026-12-01', limit: 401 })).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await laneError('tasks', { from: '2026-11-01', to: '2026-12-01', limit: 10 })).toMatchObject({ code: 'invalid_input', field: '/sources' });
  });

  it('the receivables lane reads the due-date index of open invoices: crashes leave it right, old invoices are indexed once', async () => {
    const owner = await configuredWorkspace(sg);
    const window = { from: '2026-11-25', to: '2026-12-15', limit: 50, overdue: true };
    const lane = async () => (await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "receivables", window: $w) }', { w: window }, owner)).body.data.invoicesAgenda
      .map((e: any) => [e.date, e.ref.invoice_id, e.amount]);
    const indexed = async (date: string) => ((await sg.db.collection('invoice_due_index').findOne({ _id: `${owner.workspace}|${date}` } as never)) as any)?.ids ?? [];
    // 2 × 15,000,000 + 19 % VAT = 35,700,000 due 2 Dec.
    const d = await draft(sg, owner);
    // A post that indexed the invoice and died before draft → posted: the extra id of a draft is read and dropped.
    await invoicesDue.add(sg.db, owner.workspace, '2026-12-02', d.id);
    expect(await lane()).toEqual([]);
    expect((await sg.call('invoices.post', { id: d.id }, owner)).ok).toBe(true);
    expect(await lane()).toEqual([['2026-12-02', d.id, 35700000]]);
    expect(await indexed('2026-12-02')).toEqual([d.id]);
    // Partly paid: still open, with its balance (35,700,000 − 10,700,000 = 25,000,000).
    const customer = await andina(owner);
    expect((await sg.call('payments.register', { customer_id: customer, amount: 10700000, currency: 'COP', date: '2026-11-10', invoices: [{ invoice_id: d.id, amount: 10700000 }] }, owner)).ok).toBe(true);
    expect(await lane()).toEqual([['2026-12-02', d.id, 25000000]]);
    // Paid in full: pulled from the index after it stopped being open.
    expect((await sg.call('payments.register', { customer_id: customer, amount: 25000000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: d.id, amount: 25000000 }] }, owner)).ok).toBe(true);
    expect(await indexed('2026-12-02')).toEqual([]);
    expect(await lane()).toEqual([]);
    // A crash after the payment and before the pull leaves the id behind: still not listed.
    await invoicesDue.add(sg.db, owner.workspace, '2026-12-02', d.id);
    expect(await lane()).toEqual([]);
    // Invoices open before the index existed: indexed once at start (a migrations marker), nothing twice.
    const e = await draft(sg, owner, { due_date: '2026-12-05' });
    expect((await sg.call('invoices.post', { id: e.id }, owner)).ok).toBe(true);
    await sg.db.collection('invoice_due_index').deleteMany({ workspace: owner.workspace });
    await sg.db.collection('migrations').deleteOne({ _id: 'invoice-due-index' } as never);
    expect(await lane()).toEqual([]);
    expect(await backfillInvoicesDue(sg.db)).toBeGreaterThanOrEqual(1);
    expect(await lane()).toEqual([['2026-12-05', e.id, 35700000]]);
    expect(await backfillInvoicesDue(sg.db)).toBe(0);
    await sg.db.collection('migrations').deleteOne({ _id: 'invoice-due-index' } as never);
    expect(await backfillInvoicesDue(sg.db)).toBeGreaterThanOrEqual(1);
    expect(await indexed('2026-12-05')).toEqual([e.id]);
    // Another workspace's lane never sees them.
    const stranger = testPrincipal();
    expect((await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "receivables", window: $w) }', { w: window }, stranger)).body.data.invoicesAgenda).toEqual([]);
  });
});
