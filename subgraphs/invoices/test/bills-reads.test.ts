import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate, peerGraph } from '@cuadra/shared';
import { testServiceKeys, type TestSubgraph } from '@cuadra/shared/testing';
import { startInvoices, unwrap } from './setup.ts';
import { backfillBillsDue, billsDue } from '../src/modules/bills/due.ts';
import { BILL_PAYMENTS } from '../src/modules/bills/payments.ts';
import { reversePayment } from '../src/open-items/index.ts';
import { draftBill, postedBill, vendor, workspace } from './bills-helpers.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});


describe('payables reads (metrics, the bills source, the payables lane) against hand figures', () => {
  let owner: ReturnType<typeof workspace>;
  let a: string;
  let b: string;
  const ids: Record<string, string> = {};
  const metric = async (query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: query }, owner), 'invoicesMetric');
  const records = async (query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner), 'invoicesRecords');
  const lane = async (window: Record<string, unknown>) => unwrap(await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "payables", window: $w) }', { w: window }, owner), 'invoicesAgenda');

  beforeAll(async () => {
    owner = workspace();
    a = await vendor(owner, 'Aseo Total SAS');
    b = await vendor(owner, 'Bodega Norte SAS', 'both');
    // 1: A, Oct, services 100,000 + 19 % VAT = 119,000 owed, due 20 Oct.
    ids.one = (await postedBill(sg, owner, a, { supplier_number: 'A-1', issue_date: '2026-10-05', due_date: '2026-10-20', lines: [{ description: 'Aseo', account: '5135', quantity: 1, unit_price: 100000, tax_rate_ppm: 190000 }] })).id;
    // 2: B, Nov, office equipment (an asset) 200,000, retefuente 2.5 % = 5,000 → 195,000 owed, due 30 Nov.
    ids.two = (await postedBill(sg, owner, b, { supplier_number: 'B-1', issue_date: '2026-11-03', due_date: '2026-11-30', lines: [{ description: 'Escritorio', account: '1524', quantity: 1, unit_price: 200000, tax_rate_ppm: 0 }], withholdings: [{ type: 'retefuente', rate_ppm: 25000 }] })).id;
    // 3: A, Nov, diversos 50,000, due 10 Dec.
    ids.three = (await postedBill(sg, owner, a, { supplier_number: 'A-2', issue_date: '2026-11-10', due_date: '2026-12-10', lines: [{ description: 'Cafetería', account: '5195', quantity: 1, unit_price: 50000, tax_rate_ppm: 0 }] })).id;
    // 4: B, Nov, a draft; 5: A, Nov, voided.
    ids.four = (await draftBill(sg, owner, b, { supplier_number: 'B-2', issue_date: '2026-11-12', due_date: '2026-11-20' })).id;
    ids.five = (await draftBill(sg, owner, a, { supplier_number: 'A-3', issue_date: '2026-11-12', due_date: '2026-11-20' })).id;
    await sg.call('bills.void', { id: ids.five }, owner);
    // A pays 60,000 of bill 1 on 15 Nov: 59,000 left on it.
    const paid = await sg.call('bills.pay', { vendor_id: a, amount: 60000, currency: 'COP', date: '2026-11-15', bills: [{ bill_id: ids.one, amount: 60000 }] }, owner);
    expect(paid.ok).toBe(true);
  });

  it('expenses: only expense accounts, by issue month (Oct 100,000; Nov 50,000 — the desk is an asset)', async () => {
    const m = await metric({ metric: 'expenses', from: '2026-10-01', to: '2026-11-30', interval: 'month', compare: 'previous_period' });
    expect(m).toMatchObject({ metric: 'expenses', unit: 'money', currency: 'COP' });
    expect(m.series).toEqual([
      { period: '2026-10-01', period_end: '2026-10-31', value: 100000, previous: 0 },
      { period: '2026-11-01', period_end: '2026-11-30', value: 50000, previous: 0 },
    ]);
    expect(m.summary).toEqual({ value: 150000, previous: 0 });
  });

  it('top_vendors: net bought per vendor (B 200,000; A 100,000 + 50,000)', async () => {
    const m = await metric({ metric: 'top_vendors', from: '2026-10-01', to: '2026-11-30' });
    expect(m.rows).toEqual([{ vendor_id: b, name: 'Bodega Norte SAS', value: 200000 }, { vendor_id: a, name: 'Aseo Total SAS', value: 150000 }]);
    expect(m.summary).toEqual({ value: 350000 });
    expect((await metric({ metric: 'top_vendors', from: '2026-10-01', to: '2026-11-30', limit: 1 })).rows).toHaveLength(1);
  });

  it('bills_status: November\'s bills by status (1 draft, 2 posted, 1 void; bill 1 counts in October)', async () => {
    const m = await metric({ metric: 'bills_status', from: '2026-11-01', to: '2026-11-30' });
    expect(m.unit).toBe('count');
    expect(m.rows).toEqual([
      { status: 'draft', count: 1 }, { status: 'posted', count: 2 }, { status: 'partially_paid', count: 0 }, { status: 'paid', count: 0 }, { status: 'void', count: 1 },
    ]);
    expect(m.summary.value).toBe(4);
    const oct = await metric({ metric: 'bills_status', from: '2026-10-01', to: '2026-10-31' });
    expect(oct.rows.find((r: any) => r.status === 'partially_paid').count).toBe(1);
  });

  it('ap_outstanding: 119,000 at the end of October; 119,000 + 195,000 + 50,000 − 60,000 = 304,000 at the end of November', async () => {
    const m = await metric({ metric: 'ap_outstanding', from: '2026-10-01', to: '2026-11-30', interval: 'month' });
    expect(m.series.map((p: any) => [p.period_end, p.value])).toEqual([['2026-10-31', 119000], ['2026-11-30', 304000]]);
    expect(m.summary.value).toBe(304000);
  });

  it('ap_aging at three dates, bucket by bucket', async () => {
    const at = async (as_of: string) => Object.fromEntries((await metric({ metric: 'ap_aging', as_of })).rows.map((r: any) => [r.bucket, r.value]));
    // 30 Nov: bill 1 (59,000 left, due 20 Oct: 41 days late) → 31–60; bills 2 and 3 not yet due.
    expect(await at('2026-11-30')).toEqual({ current: 245000, '1_30': 0, '31_60': 59000, '61_90': 0, over_90: 0 });
    // 14 Nov, before the payment: bill 1 whole (25 days late).
    expect(await at('2026-11-14')).toEqual({ current: 245000, '1_30': 119000, '31_60': 0, '61_90': 0, over_90: 0 });
    // 31 Oct: only bill 1 existed (11 days late).
    expect(await at('2026-10-31')).toEqual({ current: 0, '1_30': 119000, '31_60': 0, '61_90': 0, over_90: 0 });
    // 1 Mar 2027: bill 1 over 90 days, bill 2 91 days → over 90, bill 3 81 days → 61–90.
    expect(await at('2027-03-01')).toEqual({ current: 0, '1_30': 0, '31_60': 0, '61_90': 50000, over_90: 254000 });
    const m = await metric({ metric: 'ap_aging', as_of: '2026-11-30' });
    expect(m.series).toEqual([{ period: '2026-11-30', period_end: '2026-11-30', value: 304000 }]);
  });

  it('the bills source: status, kind and search with the list\'s test', async () => {
    const posted = await records({ source: 'bills', status: 'posted' });
    expect(posted.rows.map((r: any) => r.supplier_number)).toEqual(['A-2', 'B-1']);
    expect(posted.rows[0]).toEqual({
      id: ids.three, kind: 'invoice', credit_of: null, status: 'posted', supplier_number: 'A-2', vendor_id: a, vendor_name: 'Aseo Total SAS', currency: 'COP',
      issue_date: '2026-11-10', due_date: '2026-12-10', total: 50000, amount_due: 50000, balance: 50000,
    });
    expect((await records({ source: 'bills', search: 'bodega' })).rows.map((r: any) => r.supplier_number)).toEqual(['B-2', 'B-1']);
    expect((await records({ source: 'bills' })).total).toBe(5);
    // No credit notes here (bills-credit.test.ts lists them); an unknown kind is refused.
    expect((await records({ source: 'bills', kind: 'credit_note' })).rows).toEqual([]);
    expect((await records({ source: 'bills', kind: 'invoice' })).rows).toHaveLength(5);
    await expect(records({ source: 'bills', kind: 'debit_note' })).rejects.toMatchObject({ code: 'invalid_input', field: '/kind' });
    await expect(records({ source: 'bills', status: 'cancelled' })).rejects.toMatchObject({ code: 'invalid_input', field: '/status' });
    const page = await records({ source: 'bills', limit: 2 });
    const next = await records({ source: 'bills', limit: 2, cursor: page.next_cursor });
    expect([...page.rows, ...next.rows].map((r: any) => r.supplier_number)).toEqual(['A-3', 'B-2', 'A-2', 'B-1']);
  });

  it('the payables lane: open bills falling due, overdue ones included unless asked not to', async () => {
    const today = localDate(new Date());
    const entries = await lane({ from: '2026-11-25', to: '2026-12-15', limit: 50, overdue: true });
    expect(entries.map((e: any) => [e.date, e.ref.bill_id, e.amount])).toEqual([['2026-10-20', ids.one, 59000], ['2026-11-30', ids.two, 195000], ['2026-12-10', ids.three, 50000]]);
    expect(entries[0]).toMatchObject({ kind: 'deadline', source: 'payables', title: 'A-1 — Aseo Total SAS', currency: 'COP', status: '2026-10-20' < today ? 'overdue' : 'open' });
    expect((await lane({ from: '2026-11-25', to: '2026-12-15', limit: 50, overdue: false })).map((e: any) => e.ref.bill_id)).toEqual([ids.two, ids.three]);
    expect((await lane({ from: '2026-11-25', to: '2026-12-15', limit: 1, overdue: true }))).toHaveLength(1);
  });

  it('another workspace reads none of it', async () => {
    const stranger = workspace();
    const r = await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'ap_aging', as_of: '2026-11-30' } }, stranger);
    expect(r.body.data.invoicesMetric.summary.value).toBe(0);
    const s = await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'bills' } }, stranger);
    expect(s.body.data.invoicesRecords.rows).toEqual([]);
    const l = await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "payables", window: $w) }', { w: { from: '2026-11-25', to: '2026-12-15', limit: 50, overdue: true } }, stranger);
    expect(l.body.data.invoicesAgenda).toEqual([]);
  });

  it('billStatus (@inaccessible) answers inventory\'s service assertion only: a person\'s is refused, another service\'s too', async () => {
    const peers = (urls: Record<string, string>) => ({ ...testServiceKeys(), urls });
    const asInventory = peerGraph('inventory', peers({ invoices: sg.url }), owner.workspace);
    expect(await asInventory('invoices', 'query($id: ID!) { billStatus(id: $id) }', { id: ids.four })).toEqual({ billStatus: 'draft' });
    const asPerson = await sg.graphql('query($id: ID!) { billStatus(id: $id) }', { id: ids.one }, owner);
    expect(asPerson.body.errors?.[0]?.extensions?.code).toBe('policy_denied');
    expect(asPerson.body.data?.billStatus ?? null).toBeNull();
    await expect(peerGraph('payroll', peers({ invoices: sg.url }), owner.workspace)('invoices', 'query($id: ID!) { billStatus(id: $id) }', { id: ids.one })).rejects.toMatchObject({ code: 'policy_denied' });
  });
});

describe('the payables lane reads the due-date index of open bills (bills/due.ts, books/due-index.ts)', () => {
  const window = { from: '2026-11-25', to: '2026-12-15', limit: 50, overdue: true };
  const lane = async (owner: ReturnType<typeof workspace>) => unwrap(await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "payables", window: $w) }', { w: window }, owner), 'invoicesAgenda')
    .map((e: any) => [e.date, e.ref.bill_id, e.amount]);
  const indexed = async (owner: ReturnType<typeof workspace>, date: string) => ((await sg.db.collection('bill_due_index').findOne({ _id: `${owner.workspace}|${date}` } as never)) as any)?.ids ?? [];

  it('a crash between the index add and the post, or between a payment and the pull, leaves the lane right', async () => {
    const owner = workspace();
    const v = await vendor(owner, 'Papelería Central SAS');
    // 100,000 + 19 % VAT = 119,000 owed, due 2 Dec.
    const d = await draftBill(sg, owner, v, { supplier_number: 'P-1', issue_date: '2026-11-02', due_date: '2026-12-02' });
    // The post took its lock and indexed the bill, then its process died before draft → posted.
    await billsDue.add(sg.db, owner.workspace, '2026-12-02', d.id);
    await sg.db.collection('bills').updateOne({ _id: d.id } as never, { $set: { post_lock: { id: 'lock_dead', at: new Date(Date.now() - 120_000) } } });
    expect(await indexed(owner, '2026-12-02')).toEqual([d.id]);
    expect(await lane(owner)).toEqual([]); // the extra id of a draft is read and dropped
    // Another post takes over the dead lock: listed once (the second add found the id there).
    expect((await sg.call('bills.post', { id: d.id }, owner)).ok).toBe(true);
    expect(await lane(owner)).toEqual([['2026-12-02', d.id, 119000]]);
    expect(await indexed(owner, '2026-12-02')).toEqual([d.id]);
    // Paid in full: paid, then pulled from the index.
    const paid = await sg.call('bills.pay', { vendor_id: v, amount: 119000, currency: 'COP', date: '2026-11-20', bills: [{ bill_id: d.id, amount: 119000 }] }, owner);
    expect(paid.ok).toBe(true);
    expect(await indexed(owner, '2026-12-02')).toEqual([]);
    expect(await lane(owner)).toEqual([]);
    // A crash after the payment and before the pull leaves the id behind: still not listed.
    await billsDue.add(sg.db, owner.workspace, '2026-12-02', d.id);
    expect(await lane(owner)).toEqual([]);
    // The payment reversed (bank.unreconcile's path): open again, indexed before, listed with 119,000.
    await reversePayment({ db: sg.db, workspace: owner.workspace, now: new Date() }, BILL_PAYMENTS, paid.output.payment.id, '2026-11-21');
    expect(await lane(owner)).toEqual([['2026-12-02', d.id, 119000]]);
    expect(await indexed(owner, '2026-12-02')).toEqual([d.id]);
  });

  it('bills open before the index existed are indexed once at start (a migrations marker)', async () => {
    const owner = workspace();
    const v = await vendor(owner, 'Ferretería Andina SAS');
    // 100,000 + 19 % VAT = 119,000 owed, due 5 Dec.
    const b = await postedBill(sg, owner, v, { supplier_number: 'F-1', issue_date: '2026-11-02', due_date: '2026-12-05' });
    // As a database written before the index: no day document for the workspace, no marker.
    await sg.db.collection('bill_due_index').deleteMany({ workspace: owner.workspace });
    await sg.db.collection('migrations').deleteOne({ _id: 'bill-due-index' } as never);
    expect(await lane(owner)).toEqual([]);
    expect(await backfillBillsDue(sg.db)).toBeGreaterThanOrEqual(1);
    expect(await lane(owner)).toEqual([['2026-12-05', b.id, 119000]]);
    expect(await backfillBillsDue(sg.db)).toBe(0); // the marker: later starts read nothing
    // A start that died before writing its marker runs again: nothing added twice.
    await sg.db.collection('migrations').deleteOne({ _id: 'bill-due-index' } as never);
    expect(await backfillBillsDue(sg.db)).toBeGreaterThanOrEqual(1);
    expect(await indexed(owner, '2026-12-05')).toEqual([b.id]);
    expect(await lane(owner)).toEqual([['2026-12-05', b.id, 119000]]);
  });
});
