// The demo company (issue 20), run by the same `runDemo` that `npm run cuadra -- demo` runs, over
// real HTTP against a test system, at the small size. Counts are read back through records.list
// and metrics.query; revenue is checked against a sum worked out here from the plan (quantity ×
// unit price per line, no discounts, minus the credited invoices); a second run with the same
// seed adds nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planDemo, runDemo, type DemoResult } from '../scripts/demo.ts';
import { nitCheckDigit } from '../shared/src/dian/nit.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';
import { localDate } from '../shared/src/periods.ts';

let sys: TestSystem;
let key: string;
// The workspace's calendar day (Colombia, UTC−5), as the product dates things: a UTC date is tomorrow there after 19:00.
const TODAY = localDate(new Date());
const SEED = 7;
let first: DemoResult;

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

/** Every row of a records source, following cursors. */
async function all(source: string, extra: Record<string, unknown> = {}): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | undefined;
  do {
    const out = await ok('records.list', { source, limit: 100, ...extra, ...(cursor ? { cursor } : {}) });
    rows.push(...out.rows);
    cursor = out.next_cursor ?? undefined;
  } while (cursor);
  return rows;
}

beforeAll(async () => {
  sys = await startTestSystem('demo');
  const ws = await sys.workspace('Cuadra Demo SAS');
  key = ws.api_key;
  first = await runDemo({ gatewayUrl: sys.gatewayUrl, apiKey: key, seed: SEED, size: 'small', today: TODAY, ownerEmail: 'owner@example.com', perSecond: 50 });
}, 600_000);
afterAll(async () => {
  await sys?.stop();
});

describe('the demo company', () => {
  it('plans the same company from the same seed, with valid NITs', () => {
    const a = planDemo(SEED, 'small', TODAY);
    expect(planDemo(SEED, 'small', TODAY)).toEqual(a);
    expect(planDemo(SEED + 1, 'small', TODAY)).not.toEqual(a);
    for (const p of [...a.customers, ...a.vendors]) {
      const [body, dv] = p.nit.split('-');
      expect(nitCheckDigit(body)).toBe(Number(dv));
    }
    const full = planDemo(2026, 'full', TODAY);
    expect(full.customers).toHaveLength(12);
    expect(full.vendors).toHaveLength(6);
    expect(full.invoices).toHaveLength(150);
    expect(full.invoices.every((i) => i.issue_date <= TODAY && Date.parse(TODAY) - Date.parse(i.issue_date) < 366 * 86400000)).toBe(true);
  });

  it('made what the plan says, read back through records.list', async () => {
    const plan = first.plan;
    expect(first.skipped).toEqual([]);
    const parties = await all('parties');
    expect(parties.filter((p) => p.kind === 'customer')).toHaveLength(plan.customers.length);
    expect(parties.filter((p) => p.kind === 'vendor')).toHaveLength(plan.vendors.length);
    expect(await all('items')).toHaveLength(plan.items.length);
    const invoices = await all('invoices', { kind: 'invoice' });
    expect(invoices).toHaveLength(plan.invoices.length);
    const credits = await all('invoices', { kind: 'credit_note' });
    expect(credits).toHaveLength(plan.invoices.filter((i) => i.credit).length);
    expect(credits.length).toBeGreaterThan(0);
    expect(await all('bills')).toHaveLength(plan.bills.length);
    expect(await all('employees')).toHaveLength(plan.employees.length);
    expect(await all('payroll_runs')).toHaveLength(1);
    expect(await all('payment_runs')).toHaveLength(1);
    expect(await all('banks')).toHaveLength(1);
    const payments = await all('payments', { kind: 'incoming' });
    expect(payments).toHaveLength(plan.invoices.reduce((s, i) => s + i.payments.length, 0));
    // Dashboards: the year's overview, payables, and the five module homes (sales, purchases, finance, payroll, projects).
    expect(first.counts).toMatchObject({ customers: plan.customers.length, invoices: plan.invoices.length, dashboards: 2 + 5, payroll_runs: 1, payment_runs: 1 });
    expect(first.dashboard_url).toMatch(/\/dashboards\//);
    expect(first.invite_url).toMatch(/\/claim\?token=/);
  });

  it('revenue equals the posted invoices less the credited ones, summed here by hand', async () => {
    const plan = first.plan;
    const price = Object.fromEntries(plan.items.map((it, i) => [i, it.price]));
    // Subtotal of one invoice: Σ quantity × unit price (integer quantities, no discounts).
    const subtotal = (inv: (typeof plan.invoices)[number]) => inv.lines.reduce((s, l) => s + l.quantity * price[l.item], 0);
    const expected = plan.invoices.reduce((s, inv) => s + (inv.credit ? 0 : subtotal(inv)), 0);
    const from = plan.invoices[0].issue_date;
    const revenue = await ok('metrics.query', { metric: 'revenue', from: from < TODAY ? from : TODAY, to: TODAY });
    expect(revenue.summary.value).toBe(expected);
    // The same figure from the documents themselves (records rows carry the total; invoices.get the subtotal).
    const rows = [...(await all('invoices', { kind: 'invoice' })), ...(await all('invoices', { kind: 'credit_note' }))];
    const docs = await Promise.all(rows.map(async (r) => (await ok('invoices.get', { id: r.id })).invoice));
    expect(docs.every((d) => d.status !== 'draft')).toBe(true);
    expect(docs.reduce((s, d) => s + (d.kind === 'credit_note' ? -d.subtotal : d.subtotal), 0)).toBe(expected);
    // And each invoice's subtotal and VAT are the plan's, line by line (VAT rounded per line).
    const byNumberOrder = docs.filter((d) => d.kind === 'invoice').sort((a, b) => a.number.localeCompare(b.number));
    expect(byNumberOrder.map((d) => d.subtotal)).toEqual(plan.invoices.map(subtotal));
    expect(byNumberOrder.map((d) => d.tax_total)).toEqual(plan.invoices.map((inv) => inv.tax_total));
  });

  it('a second run with the same seed adds nothing', async () => {
    const again = await runDemo({ gatewayUrl: sys.gatewayUrl, apiKey: key, seed: SEED, size: 'small', today: TODAY, ownerEmail: 'owner@example.com', perSecond: 50 });
    expect(again.calls).toBe(first.calls);
    expect(again.replays).toBe(again.calls);
    expect(await all('invoices', { kind: 'invoice' })).toHaveLength(first.plan.invoices.length);
    expect(await all('parties')).toHaveLength(first.plan.customers.length + first.plan.vendors.length);
    expect(await all('bills')).toHaveLength(first.plan.bills.length);
  });
});
