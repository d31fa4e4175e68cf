import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { accuracy, forecastMonthly, holtWinters, linearTrend, seasonalNaiveDrift } from '../src/lib/forecast.ts';
import { andina, configuredWorkspace, draft, startInvoices } from './setup.ts';
import { postedBill, vendor } from './bills-helpers.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const metric = async (owner: Principal, query: Record<string, unknown>) => {
  const r = await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: query }, owner);
  if (r.body.errors?.length) return { ok: false as const, code: r.body.errors[0].extensions?.code, field: r.body.errors[0].extensions?.field, message: r.body.errors[0].message };
  return { ok: true as const, ...r.body.data.invoicesMetric };
};

async function call(owner: Principal, tool: string, input: Record<string, unknown>) {
  const r = await sg.call(tool, input, owner);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

async function manual(owner: Principal, date: string, memo: string, lines: Record<string, unknown>[]) {
  const d = await call(owner, 'journal.create', { date, memo, lines });
  return (await call(owner, 'journal.post', { id: d.entry.id })).entry;
}

/** A seeded generator (mulberry32): the same "noise" on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Monthly seasonal factors of a shop (January slow, December strong), Σ = 0. */
const SEASONAL = [-30, -20, -10, 0, 5, 10, 0, -5, 0, 10, 20, 20];

/** n months of base + trend·t + season + noise (±noise %), in whole pesos ×100 (cents). */
function generated(n: number, base: number, trend: number, scale: number, noisePct: number, seed: number): number[] {
  const rnd = seeded(seed);
  return Array.from({ length: n }, (_, t) => {
    const clean = base + trend * t + scale * SEASONAL[t % 12];
    return Math.round(clean * (1 + noisePct / 100 * (2 * rnd() - 1))) * 100;
  });
}

describe('the forecasting methods on series checked by hand', () => {
  it('reproduces a pure seasonal series (Holt-Winters additive, two seasons of history)', () => {
    // 100, 200, …, 1200 every year: level 650, no trend, season = value − 650.
    const season = Array.from({ length: 12 }, (_, i) => 100 * (i + 1));
    const f = holtWinters([...season, ...season], 12);
    expect(f.method).toBe('holt_winters_additive');
    expect(f.values.map((v) => Math.round(v * 1e6) / 1e6)).toEqual(season);
    // Through the dispatcher with 30 months: the next six follow where the history stopped (month 31 = July).
    expect(forecastMonthly([...season, ...season, ...season.slice(0, 6)], 6).values).toEqual([700, 800, 900, 1000, 1100, 1200]);
  });

  it('extrapolates a linear trend (Holt-Winters, seasonal naive with drift, and the least-squares line)', () => {
    // y = 1000 + 50·t: the next points are 1000 + 50·24 = 2200, 2250, 2300.
    const line = Array.from({ length: 24 }, (_, t) => 1000 + 50 * t);
    expect(holtWinters(line, 3).values.map((v) => Math.round(v * 1e6) / 1e6)).toEqual([2200, 2250, 2300]);
    // 18 months: the same month a year before + a year's drift (12 × 50 = 600): month 18 = y[6] + 600 = 1300 + 600.
    expect(seasonalNaiveDrift(line.slice(0, 18), 3).values).toEqual([1900, 1950, 2000]);
    // With 13 months (drift y[12] − y[0] = 600 a year), 20 months ahead is month 32 = month 8 two years on: 1400 + 2·600 = 2600 = 1000 + 50·32.
    expect(seasonalNaiveDrift(line.slice(0, 13), 20).values[19]).toBe(2600);
    // 5 months 10, 20, 30, 40, 50: slope 10, next 60, 70.
    expect(linearTrend([10, 20, 30, 40, 50], 2).values).toEqual([60, 70]);
    expect(forecastMonthly([10, 20, 30, 40, 50], 2)).toEqual({ method: 'linear_trend', values: [60, 70] });
  });

  it('falls back with little history, rounds to cents and floors at zero', () => {
    expect(forecastMonthly([100, 201], 2)).toEqual({ method: 'mean', values: [151, 151] }); // 150.5 rounds to 151
    expect(forecastMonthly([], 3)).toEqual({ method: 'none', values: [0, 0, 0] });
    // A falling line 50, 30, 10 → −10, −30: floored at 0.
    expect(forecastMonthly([50, 30, 10], 2)).toEqual({ method: 'linear_trend', values: [0, 0] });
    // MAE and MAPE by hand: errors 10 and 30 on 100 and 200 → MAE 20, MAPE (10 % + 15 %)/2 = 12.5 %.
    expect(accuracy([100, 200], [110, 170])).toEqual({ mae: 20, mape: 12.5 });
  });

  it('back-tests Holt-Winters on 36 generated months, the last 6 held out', () => {
    const y = generated(36, 40_000_000, 300_000, 400_000, 5, 17);
    const f = forecastMonthly(y.slice(0, 30), 6);
    expect(f.method).toBe('holt_winters_additive');
    const a = accuracy(y.slice(30), f.values);
    console.log(`[forecast back-test] Holt-Winters additive, 30 months → 6 held out: MAPE ${a.mape.toFixed(2)} %, MAE ${(a.mae / 100).toFixed(0)} COP (parameters ${JSON.stringify(f.parameters)})`);
    expect(a.mape).toBeLessThan(8);
  });
});

describe('revenue_forecast, expenses_forecast, cashflow_forecast from the ledger', () => {
  // 24 months of activity from November 2024 to October 2026; revenue (4135) and expenses (5135) posted as manual entries.
  const MONTHS = Array.from({ length: 24 }, (_, i) => {
    const y = 2024 + Math.floor((10 + i) / 12);
    const m = ((10 + i) % 12) + 1;
    return `${y}-${String(m).padStart(2, '0')}`;
  });
  const REVENUE = generated(24, 30_000_000, 250_000, 300_000, 4, 11);
  const EXPENSES = generated(24, 18_000_000, 100_000, 100_000, 4, 23);
  let owner: Principal;

  beforeAll(async () => {
    owner = testPrincipal();
    for (const [i, m] of MONTHS.entries()) {
      await manual(owner, `${m}-15`, `Ventas ${m}`, [{ account: '111005', debit: REVENUE[i] }, { account: '413595', credit: REVENUE[i] }]);
      await manual(owner, `${m}-20`, `Gastos ${m}`, [{ account: '5135', debit: EXPENSES[i] }, { account: '111005', credit: EXPENSES[i] }]);
    }
  }, 60_000);

  it('back-tests on the generated two years: 18 months of history, the last 6 held out', async () => {
    const rev = await metric(owner, { metric: 'revenue_forecast', as_of: '2026-05-01', horizon: 6 });
    expect(rev.ok).toBe(true);
    expect(rev.rows[0]).toMatchObject({ kind: 'method', series: 'revenue', method: 'seasonal_naive_drift', history_months: 18, history_from: '2024-11-01', history_to: '2026-04-30' });
    // The history rows are what was posted, month by month (income: credits of class 4).
    expect(rev.rows.filter((r: any) => r.kind === 'actual').map((r: any) => r.value)).toEqual(REVENUE.slice(0, 18));
    expect(rev.series.map((p: any) => p.period)).toEqual(['2026-05-01', '2026-06-01', '2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01']);
    expect(rev.series[1].period_end).toBe('2026-06-30');
    // By hand for May 2026: the same month a year before (May 2025 = index 6) + the mean year-over-year change of the 6 months that have one.
    const yoy = REVENUE.slice(12, 18).map((v, i) => v - REVENUE[i]).reduce((s, v) => s + v, 0) / 6;
    expect(rev.series[0].value).toBe(Math.round(REVENUE[6] + yoy));
    expect(rev.summary.value).toBe(rev.series.reduce((s: number, p: any) => s + p.value, 0));
    const revAcc = accuracy(REVENUE.slice(18), rev.series.map((p: any) => p.value));

    const exp = await metric(owner, { metric: 'expenses_forecast', as_of: '2026-05-01', horizon: 6 });
    expect(exp.rows[0]).toMatchObject({ method: 'seasonal_naive_drift', history_months: 18 });
    const expAcc = accuracy(EXPENSES.slice(18), exp.series.map((p: any) => p.value));

    // Cash: inflows are the revenue (debits of 111005), outflows the expenses.
    const cf = await metric(owner, { metric: 'cashflow_forecast', as_of: '2026-05-01' });
    expect(cf.series).toHaveLength(6); // horizon defaults to 6
    expect(cf.rows.slice(0, 2).map((r: any) => [r.series, r.method])).toEqual([['inflows', 'seasonal_naive_drift'], ['outflows', 'seasonal_naive_drift']]);
    expect(cf.series.map((p: any) => p.value)).toEqual(rev.series.map((p: any, i: number) => p.value - exp.series[i].value));
    const netActual = REVENUE.slice(18).map((v, i) => v - EXPENSES[18 + i]);
    const cfAcc = accuracy(netActual, cf.series.map((p: any) => p.value));

    console.log(`[forecast back-test] ledger, 18 months → 6 held out (seasonal naive + drift): revenue MAPE ${revAcc.mape.toFixed(2)} % MAE ${(revAcc.mae / 100).toFixed(0)} COP; expenses MAPE ${expAcc.mape.toFixed(2)} % MAE ${(expAcc.mae / 100).toFixed(0)} COP; net cash flow MAE ${(cfAcc.mae / 100).toFixed(0)} COP (MAPE ${cfAcc.mape.toFixed(2)} %)`);
    expect(revAcc.mape).toBeLessThan(8);
    expect(expAcc.mape).toBeLessThan(8);

    // With all 24 months (as of November 2026) the history allows Holt-Winters.
    const full = await metric(owner, { metric: 'revenue_forecast', as_of: '2026-11-01', horizon: 24 });
    expect(full.rows[0]).toMatchObject({ method: 'holt_winters_additive', history_months: 24 });
    expect(full.rows[0].parameters).toEqual({ alpha: expect.any(Number), beta: expect.any(Number), gamma: expect.any(Number) });
    expect(full.series).toHaveLength(24);
    expect(full.series[23]).toMatchObject({ period: '2028-10-01', period_end: '2028-10-31' });
  });

  it('refuses a horizon out of 1–24 and a non-monthly interval, with the field', async () => {
    expect(await metric(owner, { metric: 'revenue_forecast', horizon: 25 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/horizon' });
    expect(await metric(owner, { metric: 'expenses_forecast', horizon: 0 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/horizon' });
    expect(await metric(owner, { metric: 'cash_projection', horizon: 2.5 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/horizon' });
    expect(await metric(owner, { metric: 'cashflow_forecast', interval: 'week' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/interval' });
  });

  it('is sealed to the workspace: another sees no history', async () => {
    const other = await metric(testPrincipal(), { metric: 'revenue_forecast', as_of: '2026-05-01', horizon: 2 });
    expect(other.rows[0]).toMatchObject({ method: 'none', history_months: 0 });
    expect(other.series.map((p: any) => p.value)).toEqual([0, 0]);
  });
});

describe('cash_projection: bank balance, open receivables and payables by due date, recurring invoices', () => {
  it('projects month-end cash, checked by hand', async () => {
    const owner = await configuredWorkspace(sg);
    // Cash: 50,000,000.00 COP paid in as capital into the bank (111005), 2026-11-03.
    await manual(owner, '2026-11-03', 'Aporte de capital', [{ account: '111005', debit: 5_000_000_000 }, { account: '3105', credit: 5_000_000_000 }]);
    // An invoice due 2026-12-02: 2 × 150,000.00 + 19 % VAT = 357,000.00 open.
    const inv = await draft(sg, owner);
    const posted = await call(owner, 'invoices.post', { id: inv.id });
    expect(posted.invoice.balance).toBe(35_700_000);
    // An overdue invoice (due 2026-11-10): 1 × 1,000,000.00 + 19 % = 1,190,000.00, counted in the first month.
    const late = await draft(sg, owner, { issue_date: '2026-10-10', due_date: '2026-11-10', lines: [{ description: 'Soporte', quantity: 1, unit_price: 100_000_000, tax_rate_ppm: 190000 }] });
    await call(owner, 'invoices.post', { id: late.id });
    // A bill due 2027-01-15: 1 × 4,000,000.00 + 19 % = 4,760,000.00 open.
    const bill = await postedBill(sg, owner, await vendor(owner), { due_date: '2027-01-15', lines: [{ description: 'Arriendo', account: '5120', quantity: 1, unit_price: 400_000_000, tax_rate_ppm: 190000 }] });
    expect(bill.balance).toBe(476_000_000);
    // A monthly recurring invoice from 2026-12-05, due 10 days later: 2,000,000.00 + 19 % = 2,380,000.00 each,
    // due 12-15, 01-15, 02-15 within a 3-month horizon (Nov, Dec, Jan): December and January.
    await call(owner, 'invoices.recurring_create', {
      customer_id: await andina(owner), currency: 'COP', interval: 'month', start_date: '2026-12-05', due_days: 10,
      lines: [{ description: 'Suscripción', quantity: 1, unit_price: 200_000_000, tax_rate_ppm: 190000 }],
    });

    const p = await metric(owner, { metric: 'cash_projection', as_of: '2026-11-25', horizon: 3 });
    expect(p.ok).toBe(true);
    expect(p.rows[0]).toMatchObject({ kind: 'method', method: 'known_documents', opening_cash: 5_000_000_000, accounts: [{ account: '111005', balance: 5_000_000_000 }] });
    const proj = p.rows.filter((r: any) => r.kind === 'projection');
    // November (from 11-25): the overdue 1,190,000.00 in → 51,190,000.00.
    expect(proj[0]).toMatchObject({ period: '2026-11-25', period_end: '2026-11-30', opening: 5_000_000_000, receivables: 119_000_000, recurring: 0, payables: 0, closing: 5_119_000_000 });
    // December: 357,000.00 + 2,380,000.00 in → 53,927,000.00.
    expect(proj[1]).toMatchObject({ period: '2026-12-01', receivables: 35_700_000, recurring: 238_000_000, payables: 0, closing: 5_392_700_000 });
    // January: 2,380,000.00 in, 4,760,000.00 out → 51,547,000.00.
    expect(proj[2]).toMatchObject({ period: '2027-01-01', period_end: '2027-01-31', receivables: 0, recurring: 238_000_000, payables: 476_000_000, closing: 5_154_700_000 });
    expect(p.series.map((s: any) => s.value)).toEqual([5_119_000_000, 5_392_700_000, 5_154_700_000]);
    expect(p.summary.value).toBe(5_154_700_000);
    expect(p.rows.find((r: any) => r.kind === 'recurring')).toMatchObject({ amount_due: 238_000_000, occurrences: 2 });

    // A horizon of one month leaves the December invoice and the January bill as "later".
    const one = await metric(owner, { metric: 'cash_projection', as_of: '2026-11-25', horizon: 1 });
    expect(one.rows[0]).toMatchObject({ receivables_due_later: 35_700_000, payables_due_later: 476_000_000 });
    expect(one.series).toEqual([{ period: '2026-11-25', period_end: '2026-11-30', value: 5_119_000_000 }]);

    // Sealed: another workspace has no cash, nothing open.
    const other = await metric(testPrincipal(), { metric: 'cash_projection', as_of: '2026-11-25', horizon: 1 });
    expect(other.series).toEqual([{ period: '2026-11-25', period_end: '2026-11-30', value: 0 }]);
  });
});
