import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

/*
 * Issue 38, the finance half of "Done when", through the gateway as a client calls it: an asset
 * depreciated in both books for 14 months then sold; a rental month invoiced; a plan invoiced
 * monthly with an upgrade prorated. `assets_summary` and the records sources are compared with
 * figures worked by hand below; every journal entry of the workspace is summed here and balances.
 */

let sys: TestSystem;
let key: string;
const ok = (tool: string, input: unknown) => sys.output(tool, input, key);

beforeAll(async () => {
  sys = await startTestSystem('assets-rentals-plans');
  ({ api_key: key } = await sys.workspace('Muebles y Oficinas SAS'));
});
afterAll(async () => {
  await sys?.stop();
});

describe('a company\'s assets, a rental and a subscription plan, through the gateway', () => {
  it('two assets in two books, one sold after 14 months; a month rented and invoiced; a plan invoiced monthly, upgraded and prorated', async () => {
    const customer = (await ok('parties.create', { name: 'Coworking Norte SAS', kind: 'customer', tax_id: { type: 'NIT', number: '860002964-4' } })).party.id;

    // ── Fixed assets ──────────────────────────────────────────────────────────────────────────
    // A server: cost 3,600,000.00 COP (360,000,000 cents), residual 360,000.00, NIIF life 36 months, in service 2025-08-01.
    const server = (await ok('assets.create', {
      name: 'Servidor', class: 'computers', cost: 360000000, residual_value: 36000000, acquisition_date: '2025-08-01', useful_life_months: 36, credit_account: '220505',
    })).asset;
    // Desks: 120,000.00 COP, 120 months, in service 2026-01-01.
    const desks = (await ok('assets.create', { name: 'Escritorios', class: 'office_equipment', cost: 12000000, acquisition_date: '2026-01-01', useful_life_months: 120, credit_account: '111005' })).asset;

    const september = await ok('assets.depreciate', { month: '2026-09' });
    // Server, base 360,000,000 − 36,000,000 = 324,000,000.
    //   NIIF straight line: 324,000,000 / 36 = 9,000,000 a month; Aug 2025–Sep 2026 = 14 months → 126,000,000.
    //   Fiscal: the NIIF rate 12/36 = 33.3 % exceeds the 20 % cap for computers (ET art. 137), so
    //   324,000,000 × 20 % / 12 = 5,400,000 a month → 14 × 5,400,000 = 75,600,000.
    // Desks, base 12,000,000: 12,000,000 / 120 = 100,000 a month, Jan–Sep = 9 months → 900,000; the NIIF
    //   rate 12/120 = 10 % equals the furniture cap, so the fiscal book is the same: 900,000.
    // Totals: NIIF 126,000,000 + 900,000 = 126,900,000; fiscal 75,600,000 + 900,000 = 76,500,000.
    expect(september).toMatchObject({ assets: 2, niif_total: 126900000, fiscal_total: 76500000, complete: true });
    expect(september.entries).toHaveLength(14 + 9);
    const held = (await ok('assets.get', { id: server.id })).asset;
    // Carrying amounts: NIIF 360,000,000 − 126,000,000 = 234,000,000; fiscal 360,000,000 − 75,600,000 = 284,400,000;
    // deferred-tax basis 284,400,000 − 234,000,000 = 50,400,000.
    expect(held).toMatchObject({ months_depreciated: 14, niif_net: 234000000, fiscal_net: 284400000, deferred_tax_basis: 50400000, next_month: '2026-10' });

    const atSeptember = await ok('metrics.query', { metric: 'assets_summary', as_of: '2026-09-30' });
    expect(atSeptember.rows).toEqual([
      expect.objectContaining({ class: 'office_equipment', cost: 12000000, accumulated_depreciation: 900000, net: 11100000 }),
      expect.objectContaining({ class: 'computers', cost: 360000000, accumulated_depreciation: 126000000, net: 234000000 }),
      expect.objectContaining({ class: 'total', cost: 372000000, accumulated_depreciation: 126900000, net: 245100000 }),
    ]);
    expect(atSeptember.summary.value).toBe(245100000);

    // Sold on 2026-10-15 for 2,000,000.00 into the bank (depreciated through September: whole months).
    // NIIF: 200,000,000 − 234,000,000 = −34,000,000, a loss (5310). Fiscal: 200,000,000 − 284,400,000 = −84,400,000.
    const sold = (await ok('assets.dispose', { id: server.id, date: '2026-10-15', proceeds: 200000000, proceeds_account: '111005', party_id: customer })).asset;
    expect(sold).toMatchObject({ status: 'sold', disposal: { gain: -34000000, fiscal_gain: -84400000 } });
    // October: only the desks (10th month, 100,000).
    expect(await ok('assets.depreciate', { month: '2026-10' })).toMatchObject({ assets: 1, niif_total: 100000, fiscal_total: 100000 });
    const atOctober = await ok('metrics.query', { metric: 'assets_summary', as_of: '2026-10-31' });
    // The server left the books: 1528 and 159220 are back to 0. Desks: 12,000,000 − 1,000,000 = 11,000,000.
    expect(atOctober.rows).toEqual([
      expect.objectContaining({ class: 'office_equipment', cost: 12000000, accumulated_depreciation: 1000000, net: 11000000 }),
      expect.objectContaining({ class: 'total', net: 11000000 }),
    ]);
    const assetRows = (await ok('records.list', { source: 'assets', limit: 10 })).rows;
    expect(assetRows.map((r: any) => [r.name, r.status, r.niif_accumulated, r.fiscal_accumulated, r.deferred_tax_basis])).toEqual([
      ['Escritorios', 'active', 1000000, 1000000, 0],
      ['Servidor', 'sold', 126000000, 75600000, 50400000],
    ]);

    // ── A rental month ────────────────────────────────────────────────────────────────────────
    // The desks rented for October (Bogotá midnight to midnight) at 1,500,000.00 a month, deposit 500,000.00.
    const rental = (await ok('rentals.create', {
      asset_id: desks.id, customer_id: customer, unit: 'month', rate: 150000000, deposit: 50000000, start: '2026-10-01T05:00:00Z', end: '2026-11-01T05:00:00Z',
    })).rental;
    expect(await sys.invoke('rentals.create', { asset_id: desks.id, customer_id: customer, unit: 'day', rate: 1, start: '2026-10-20T05:00:00Z', end: '2026-10-21T05:00:00Z' }, key))
      .toMatchObject({ status: 409, body: { code: 'conflict' } });
    await ok('rentals.deliver', { id: rental.id, condition: 'Buen estado' });
    const rentalInvoice = (await ok('rentals.invoice', { id: rental.id })).invoiced;
    expect(rentalInvoice).toHaveLength(1);
    // 1 MON × 1,500,000.00 = 150,000,000 cents; VAT 19 % = 28,500,000; total 178,500,000; dated the period's first day.
    expect((await ok('invoices.get', { id: rentalInvoice[0] })).invoice).toMatchObject({ issue_date: '2026-10-01', subtotal: 150000000, tax_total: 28500000, total: 178500000 });
    expect((await ok('records.list', { source: 'rentals', status: 'delivered' })).rows).toEqual([
      expect.objectContaining({ id: rental.id, resource_name: 'Escritorios', total: 150000000, invoiced: 150000000, deposit: 50000000 }),
    ]);

    // ── A plan, invoiced monthly, upgraded mid-period ─────────────────────────────────────────
    const basic = (await ok('plans.create', { name: 'Básico', price: 10000000, interval: 'month', setup_fee: 5000000 })).plan;
    const pro = (await ok('plans.create', { name: 'Pro', price: 25000000, interval: 'month' })).plan;
    const sub = (await ok('plans.subscribe', { plan_id: basic.id, customer_id: customer, start_date: '2026-09-01' })).subscription;
    // The setup fee: 50,000.00 + 19 % = 59,500.00.
    expect((await ok('invoices.get', { id: sub.setup_invoice_id })).invoice).toMatchObject({ issue_date: '2026-09-01', subtotal: 5000000, total: 5950000 });
    // The recurring machinery issues September and October in advance: 100,000.00 + 19 % = 119,000.00 each.
    const firstRun = (await ok('invoices.recurring_run', { as_of: '2026-10-31' })).issued;
    expect(firstRun.map((i: any) => i.date)).toEqual(['2026-09-01', '2026-10-01']);
    for (const i of firstRun) expect((await ok('invoices.get', { id: i.invoice_id })).invoice).toMatchObject({ subtotal: 10000000, total: 11900000, source: { subscription_id: sub.id } });

    // Upgrade on 2026-10-11. Period billed: 2026-10-01 to 2026-10-31 = 31 days; remaining from the 11th = 21 days.
    //   charge = 25,000,000 × 21 / 31 = 16,935,483.87 → 16,935,484
    //   credit = 10,000,000 × 21 / 31 =  6,774,193.55 →  6,774,194
    //   net = 10,161,290; VAT 19 % = 1,930,645.10 → 1,930,645; total 12,091,935.
    const upgraded = (await ok('plans.change', { subscription_id: sub.id, plan_id: pro.id, date: '2026-10-11' })).subscription;
    expect(upgraded.changes).toEqual([expect.objectContaining({ effective_date: '2026-10-11', days_remaining: 21, days_in_period: 31, charge: 16935484, credit: 6774194 })]);
    const proration = (await ok('invoices.get', { id: upgraded.changes[0].invoice_id })).invoice;
    expect(proration).toMatchObject({ issue_date: '2026-10-11', subtotal: 10161290, tax_total: 1930645, total: 12091935 });
    // November at the new plan: 250,000.00 + 19 % = 297,500.00.
    const november = (await ok('invoices.recurring_run', { as_of: '2026-11-01' })).issued;
    expect(november.map((i: any) => i.date)).toEqual(['2026-11-01']);
    expect((await ok('invoices.get', { id: november[0].invoice_id })).invoice).toMatchObject({ subtotal: 25000000, total: 29750000 });
    expect((await ok('records.list', { source: 'plans' })).rows.map((r: any) => [r.name, r.subscribers])).toEqual([['Pro', 1], ['Básico', 0]]);
    // Cancelled at the period's end: nothing after November's period.
    expect((await ok('plans.cancel', { subscription_id: sub.id })).subscription).toMatchObject({ status: 'cancelling', cancel_at: '2026-12-01' });
    expect((await ok('records.list', { source: 'plans' })).rows.map((r: any) => [r.name, r.subscribers])).toEqual([['Pro', 0], ['Básico', 0]]);

    // ── Every entry of the workspace balances, summed here ───────────────────────────────────
    const entries: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok('journal.list', { limit: 100, ...(cursor ? { cursor } : {}) });
      entries.push(...page.rows);
      cursor = page.next_cursor;
    } while (cursor);
    // 2 acquisitions, 14 + 10 depreciation months, 1 sale, 1 deposit (the invoices are drafts).
    expect(entries).toHaveLength(2 + 24 + 1 + 1);
    for (const e of entries) {
      const debit = e.lines.reduce((s: number, l: any) => s + l.debit, 0);
      const credit = e.lines.reduce((s: number, l: any) => s + l.credit, 0);
      expect([e.id, debit]).toEqual([e.id, credit]);
    }
    const sale = entries.find((e) => e.source.kind === 'asset_disposal');
    // Dr 159220 126,000,000 + Dr 111005 200,000,000 + Dr 5310 34,000,000 = Cr 1528 360,000,000.
    expect(sale.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['159220', 126000000, 0], ['111005', 200000000, 0], ['1528', 0, 360000000], ['5310', 34000000, 0]]);
  });
});
