// Issue 17's "done when": a generated year of activity (2025) through the tools over real HTTP (gateway
// REST): customers, monthly invoices and their collection, bills and their payment, manual entries, a
// month closed, the year-end close. Then the statements must tie out: the balance sheet balances at every
// month end, each month's result equals the change in equity, the trial balance sums to zero, `compare`
// figures equal the prior window read separately — and the totals equal the test's own sums of what it
// posted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}
const metric = (q: Record<string, unknown>) => ok('metrics.query', q);

const MONTHS = Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, '0')}`);
const endOf = (ym: string) => new Date(Date.UTC(Number(ym.slice(0, 4)), Number(ym.slice(5, 7)), 0)).toISOString().slice(0, 10);

/** The test's own ledger of what it posted, in cents: the hand calculation the statements must equal. */
const posted = { capital: 0, revenue: 0, collected: 0, billNet: 0, billVat: 0, billPaid: 0, salaries: 0, open: 0, revenueByMonth: [] as number[], expenseByMonth: [] as number[] };
/** Per tag of the dimension `proyecto` (and untagged), what the test posted: income and costs + expenses, in cents. */
const byTag: Record<'alfa' | 'beta' | 'untagged', { income: number; costs: number }> = { alfa: { income: 0, costs: 0 }, beta: { income: 0, costs: 0 }, untagged: { income: 0, costs: 0 } };
/** Balance sheets read by the equity test, kept for the cash flow's tie-out. */
const sheets: Record<string, any[]> = {};

beforeAll(async () => {
  sys = await startTestSystem('booksyear');
  key = (await sys.workspace('Libros del Año SAS')).api_key;
});
afterAll(async () => {
  await sys?.stop();
});

describe('a generated year of books', () => {
  it('posts a year of activity through the tools', async () => {
    await ok('einvoicing.configure', {
      issuer: { nit: '900373115-3', name: 'Libros del Año SAS' }, technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
      numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
    });
    const customers = [
      (await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' } })).party.id,
      (await ok('parties.create', { name: 'Ferretería Búho Ltda', kind: 'customer', tax_id: { type: 'NIT', number: '860002964-4' } })).party.id,
    ];
    const vendor = (await ok('parties.create', { name: 'Arriendos del Norte SAS', kind: 'vendor' })).party.id;
    // A dimension of the workspace's own (cost_center exists by default) with two tags.
    await ok('dimensions.create', { key: 'proyecto', name: 'Proyecto' });
    await ok('dimensions.create_tag', { dimension: 'proyecto', key: 'alfa', name: 'Proyecto Alfa' });
    await ok('dimensions.create_tag', { dimension: 'proyecto', key: 'beta', name: 'Proyecto Beta' });

    // Opening capital in the bank, dated the day before the year: 200,000,000.00 COP.
    const capital = await ok('journal.create', { date: '2024-12-31', memo: 'Capital inicial', lines: [{ account: '111005', debit: 20_000_000_000 }, { account: '3105', credit: 20_000_000_000 }] });
    await ok('journal.post', { id: capital.entry.id });
    posted.capital = 20_000_000_000;

    let previous: { id: string; customer: string; balance: number } | null = null;
    for (const [i, m] of MONTHS.entries()) {
      // Sales: one invoice a month, seasonal, 19 % VAT; 1 + (i % 3) units of consulting at 4,000,000.00 + 250,000.00·i.
      const quantity = 1 + (i % 3);
      const price = 400_000_000 + 25_000_000 * i;
      const customer = customers[i % 2];
      // The invoice line is tagged proyecto alfa in January, March… and beta in February, April…
      const project = i % 2 === 0 ? 'alfa' : 'beta';
      const inv = await ok('invoices.create', {
        customer_id: customer, currency: 'COP', issue_date: `${m}-05`, due_date: `${MONTHS[i + 1] ?? '2026-01'}-05`,
        lines: [{ description: `Consultoría ${m}`, quantity, unit_price: price, tax_rate_ppm: 190000, tags: { proyecto: project } }],
      });
      const post = await ok('invoices.post', { id: inv.invoice.id });
      expect(post.invoice.subtotal).toBe(quantity * price);
      expect(post.invoice.total).toBe(quantity * price + Math.round(quantity * price * 0.19));
      posted.revenue += quantity * price;
      posted.revenueByMonth.push(quantity * price);
      byTag[project].income += quantity * price;
      // Collection: last month's invoice paid in full on the 10th.
      if (previous) {
        await ok('payments.register', { customer_id: previous.customer, amount: previous.balance, currency: 'COP', date: `${m}-10`, method: 'bank_transfer', invoices: [{ invoice_id: previous.id }] });
        posted.collected += previous.balance;
      }
      previous = { id: inv.invoice.id, customer, balance: post.invoice.balance };

      // Rent: a bill of 1,500,000.00 + 19 % VAT on the 8th, paid on the 28th.
      const bill = await ok('bills.create', {
        vendor_id: vendor, supplier_number: `AR-${m}`, currency: 'COP', issue_date: `${m}-08`, due_date: `${m}-28`,
        lines: [{ description: `Arriendo ${m}`, account: '5120', quantity: 1, unit_price: 150_000_000, tax_rate_ppm: 190000, tags: { proyecto: 'beta' } }],
      });
      const pb = await ok('bills.post', { id: bill.bill.id });
      expect(pb.bill.balance).toBe(178_500_000);
      await ok('bills.pay', { vendor_id: vendor, amount: pb.bill.balance, currency: 'COP', date: `${m}-28`, bills: [{ bill_id: bill.bill.id }] });
      posted.billNet += 150_000_000;
      byTag.beta.costs += 150_000_000; // the rent line is tagged beta
      posted.billVat += 28_500_000;
      posted.billPaid += 178_500_000;

      // Salaries as a manual entry on the last day: 600,000.00 + 10,000.00·i.
      const salary = 60_000_000 + 1_000_000 * i;
      // January to March the salary line is tagged proyecto alfa; from April it is untagged.
      const salaryTag = i < 3 ? 'alfa' : 'untagged';
      const je = await ok('journal.create', { date: endOf(m), memo: `Nómina ${m}`, lines: [{ account: '5105', debit: salary, ...(i < 3 ? { tags: { proyecto: 'alfa' } } : {}) }, { account: '111005', credit: salary }] });
      await ok('journal.post', { id: je.entry.id });
      posted.salaries += salary;
      byTag[salaryTag].costs += salary;
      posted.expenseByMonth.push(150_000_000 + salary);

      // June is closed once its books are done: nothing more posts into it.
      if (m === '2025-06') {
        expect((await ok('periods.close', { month: '2025-06' })).period.status).toBe('closed');
        const late = await sys.invoke('journal.create', { date: '2025-06-15', memo: 'tarde', lines: [{ account: '5105', debit: 100 }, { account: '111005', credit: 100 }] }, key);
        expect(late.status).toBe(409);
        expect(late.body.code).toBe('conflict');
      }
    }
    posted.open = previous!.balance; // December's invoice, due 2026-01-05, is still open
    // The year-end close: December's closing entry moves the result to 3605.
    expect((await ok('periods.close', { month: '2025-12' })).period.status).toBe('closed');
  }, 90_000);

  const result = () => posted.revenue - posted.billNet - posted.salaries;

  it('has a balance sheet that balances at every month end, each month\'s result equal to the change in equity', async () => {
    const equityAt = async (date: string) => {
      const bs = await metric({ metric: 'balance_sheet', as_of: date });
      sheets[date] = bs.rows;
      const total = (section: string) => bs.rows.find((r: any) => r.kind === 'total' && r.section === section).balance;
      expect(total('asset'), `balance sheet at ${date}`).toBe(total('liability_and_equity'));
      expect(total('liability') + total('equity')).toBe(total('liability_and_equity'));
      return { equity: total('equity'), assets: total('asset'), rows: bs.rows };
    };
    let before = await equityAt('2024-12-31');
    expect(before.equity).toBe(posted.capital);
    const monthly = await metric({ metric: 'income_statement', from: '2025-01-01', to: '2025-12-31', interval: 'month' });
    expect(monthly.series).toHaveLength(12);
    for (const [i, m] of MONTHS.entries()) {
      const after = await equityAt(endOf(m));
      // By hand: the month's invoice net less its rent net and salary.
      expect(monthly.series[i].value, m).toBe(posted.revenueByMonth[i] - posted.expenseByMonth[i]);
      expect(after.equity - before.equity, `change in equity in ${m}`).toBe(monthly.series[i].value);
      before = after;
    }
    // The year: income statement result = Σ invoices' net − Σ rent net − Σ salaries; equity = capital + result.
    const year = await metric({ metric: 'income_statement', from: '2025-01-01', to: '2025-12-31' });
    const totals = Object.fromEntries(year.rows.filter((r: any) => r.kind === 'total').map((r: any) => [r.section, r.value]));
    expect(totals.income).toBe(posted.revenue);
    expect(totals.expense + totals.cost).toBe(posted.billNet + posted.salaries);
    expect(year.summary.value).toBe(result());
    expect(before.equity).toBe(posted.capital + result());
    // After the year-end close the result sits in 3605 (a profit), and the unclosed-result line is 0.
    const account = (code: string) => before.rows.find((r: any) => r.account === code)?.balance ?? 0;
    expect(result()).toBeGreaterThan(0);
    expect(account('3605')).toBe(result());
    expect(before.rows.find((r: any) => r.kind === 'result').balance).toBe(0);
    // Cash by hand: capital + collections − bills paid − salaries. The last invoice (December) is still open.
    expect(account('111005')).toBe(posted.capital + posted.collected - posted.billPaid - posted.salaries);
  });

  it('has a trial balance that sums to zero at every month end', async () => {
    for (const m of MONTHS) {
      const tb = await metric({ metric: 'trial_balance', as_of: endOf(m) });
      const debit = tb.rows.reduce((s: number, r: any) => s + r.debit, 0);
      const credit = tb.rows.reduce((s: number, r: any) => s + r.credit, 0);
      expect(debit, m).toBe(credit);
      expect(tb.rows.reduce((s: number, r: any) => s + r.balance, 0), m).toBe(0);
      expect(tb.summary.value).toBe(debit);
    }
  });

  it('gives compare figures equal to the prior window read separately', async () => {
    // previous_period is the same number of days just before (CONTRACT §8): 92 days before 1 October is 1 July;
    // 61 days before 1 August is 1 June — windows whose months line up, so the monthly points pair one to one.
    for (const [from, to, prevFrom, prevTo] of [
      ['2025-10-01', '2025-12-31', '2025-07-01', '2025-09-30'],
      ['2025-08-01', '2025-09-30', '2025-06-01', '2025-07-31'],
    ]) {
      const cmp = await metric({ metric: 'income_statement', from, to, interval: 'month', compare: 'previous_period' });
      const prior = await metric({ metric: 'income_statement', from: prevFrom, to: prevTo, interval: 'month' });
      expect(cmp.summary.previous, `${from}…${to}`).toBe(prior.summary.value);
      expect(cmp.series.map((p: any) => p.previous)).toEqual(prior.series.map((p: any) => p.value));
      const priorByAccount = new Map(prior.rows.filter((r: any) => r.kind === 'account').map((r: any) => [r.account, r.value]));
      for (const r of cmp.rows.filter((x: any) => x.kind === 'account')) expect(r.previous, r.account).toBe(priorByAccount.get(r.account) ?? 0);
      const priorTotals = prior.rows.filter((r: any) => r.kind === 'total').map((r: any) => [r.section, r.value]);
      expect(cmp.rows.filter((r: any) => r.kind === 'total').map((r: any) => [r.section, r.previous])).toEqual(priorTotals);
    }
    // previous_year: 2025's last quarter against 2024's, read separately (only the capital entry, no result).
    const yoy = await metric({ metric: 'income_statement', from: '2025-10-01', to: '2025-12-31', compare: 'previous_year' });
    const last = await metric({ metric: 'income_statement', from: '2024-10-01', to: '2024-12-31' });
    expect(yoy.summary.previous).toBe(last.summary.value);
    expect(yoy.summary.previous).toBe(0);
  });

  it('has dimensions that add up to the result, and a saved metric that answers as the query it saved', async () => {
    // By hand: alfa = January, March… invoices' net − January–March salaries; beta = February, April… invoices' net − every rent;
    // untagged = − April–December salaries. With limit 1 the better tag is its own row and the other goes to "other".
    const value = (t: keyof typeof byTag) => byTag[t].income - byTag[t].costs;
    expect(byTag.alfa.income + byTag.beta.income).toBe(posted.revenue);
    expect(byTag.alfa.costs + byTag.beta.costs + byTag.untagged.costs).toBe(posted.billNet + posted.salaries);
    const [best, rest] = value('alfa') >= value('beta') ? ['alfa', 'beta'] as const : ['beta', 'alfa'] as const;
    const query = { metric: 'profitability', from: '2025-01-01', to: '2025-12-31', dimension_key: 'proyecto', limit: 1 };
    const p = await metric(query);
    expect(p.summary.value).toBe(result());
    expect(p.rows.map((r: any) => [r.kind, r.tag, r.income, r.costs, r.value])).toEqual([
      ['tag', best, byTag[best].income, byTag[best].costs, value(best)],
      ['other', null, byTag[rest].income, byTag[rest].costs, value(rest)],
      ['untagged', null, 0, byTag.untagged.costs, value('untagged')],
    ]);
    expect(p.rows[0].name).toBe(best === 'alfa' ? 'Proyecto Alfa' : 'Proyecto Beta');
    // The rows (tag, other, untagged) add up to the total, which is the income statement's result for the year.
    expect(p.rows.reduce((s: number, r: any) => s + r.value, 0)).toBe(p.summary.value);
    const year = await metric({ metric: 'income_statement', from: '2025-01-01', to: '2025-12-31' });
    expect(p.summary.value).toBe(year.summary.value);

    // Saved under a key, the same query answers the same through saved:<key>.
    expect((await ok('metrics.save', { key: 'rentabilidad-proyecto', query })).created).toBe(true);
    expect(await metric({ metric: 'saved:rentabilidad-proyecto' })).toEqual(p);
  });

  it('has a cash flow whose activities add up to the change of cash between the balance sheets', async () => {
    const cashIn = (rows: any[]) => rows.filter((r) => r.kind === 'account' && r.account.startsWith('11')).reduce((s, r) => s + r.balance, 0);
    const opening = cashIn(sheets['2024-12-31']);
    const closing = cashIn(sheets['2025-12-31']);
    expect(opening).toBe(posted.capital);
    expect(closing).toBe(posted.capital + posted.collected - posted.billPaid - posted.salaries);
    const cf = await metric({ metric: 'cashflow', from: '2025-01-01', to: '2025-12-31' });
    const row = (section: string) => cf.rows.find((r: any) => r.section === section && r.kind !== 'account').value;
    // By hand: operating = collections − bills paid − salaries; nothing invested or financed in 2025 (the capital came in 2024).
    expect(row('operating')).toBe(posted.collected - posted.billPaid - posted.salaries);
    expect(row('investing')).toBe(0);
    expect(row('financing')).toBe(0);
    expect(row('operating') + row('investing') + row('financing')).toBe(closing - opening);
    expect(row('net_change')).toBe(closing - opening);
    expect(cf.summary.value).toBe(closing - opening);
    expect([row('opening_cash'), row('closing_cash')]).toEqual([opening, closing]);
    // August against July: previous_period is the 31 days before 1 August, July itself, read separately.
    const aug = await metric({ metric: 'cashflow', from: '2025-08-01', to: '2025-08-31', compare: 'previous_period' });
    const jul = await metric({ metric: 'cashflow', from: '2025-07-01', to: '2025-07-31' });
    expect(aug.summary.previous).toBe(jul.summary.value);
    const totals = (x: any, side: 'value' | 'previous') => x.rows.filter((r: any) => r.kind === 'total').map((r: any) => [r.section, r[side]]);
    expect(totals(aug, 'previous')).toEqual(totals(jul, 'value'));
    // July by hand: June's invoice collected, July's rent paid, July's salary (month index 6).
    expect(jul.summary.value).toBe(posted.revenueByMonth[5] + Math.round(posted.revenueByMonth[5] * 0.19) - 178_500_000 - (60_000_000 + 6_000_000));
  });

  it('feeds the forecasts the same monthly figures', async () => {
    const f = await metric({ metric: 'revenue_forecast', as_of: '2026-01-01', horizon: 3 });
    expect(f.rows[0]).toMatchObject({ kind: 'method', method: 'seasonal_naive_drift', history_months: 13 });
    // History from December 2024 (the capital entry's month, income 0), then 2025 month by month.
    expect(f.rows.filter((r: any) => r.kind === 'actual').map((r: any) => r.value)).toEqual([0, ...posted.revenueByMonth]);
    expect(f.series).toHaveLength(3);
    // The other forecasts answer through the gateway too (their answers held to metrics.query's output schema).
    const cf = await metric({ metric: 'cashflow_forecast', as_of: '2026-01-01', horizon: 2 });
    expect(cf.rows.slice(0, 2).map((r: any) => r.method)).toEqual(['seasonal_naive_drift', 'seasonal_naive_drift']);
    expect((await metric({ metric: 'expenses_forecast', as_of: '2026-01-01' })).series).toHaveLength(6);
    // Cash projection at the year end, by hand: the bank's balance, then December's open invoice collected in January.
    const cash = posted.capital + posted.collected - posted.billPaid - posted.salaries;
    const p = await metric({ metric: 'cash_projection', as_of: '2025-12-31', horizon: 2 });
    expect(p.series).toEqual([
      { period: '2025-12-31', period_end: '2025-12-31', value: cash },
      { period: '2026-01-01', period_end: '2026-01-31', value: cash + posted.open },
    ]);
    const tooFar = await sys.invoke('metrics.query', { metric: 'cash_projection', horizon: 25 }, key);
    expect(tooFar.status).toBe(422);
    expect(tooFar.body).toMatchObject({ code: 'invalid_input', field: '/horizon' });
  });
});
