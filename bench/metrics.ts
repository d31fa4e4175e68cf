// `node bench/metrics.ts`: how the receivables read-outs grow with the data. Seeds workspaces of
// 1,000, 10,000 and 100,000 posted invoices (one year, 200 customers; 85 % paid, 5 % partly paid,
// 10 % open) with their rollups, then times the invoices subgraph's `invoicesMetric` and
// `invoicesRecords` GraphQL fields over HTTP (real server, MongoDB-protocol server, memory backend).
//
// Seeding writes the documents and the rollups they would have produced in bulk (the same
// shapes and counters the tools write; replaying 100,000 posts and payments through the tools
// would take most of an hour and measures the write path, not the reads).
// Set BENCH_SIZES=1000,10000 to choose sizes; BENCH_RUNS (default 15) timed runs per query;
// BENCH_ONLY=records to time only the queries whose label contains that text.
// The MongoDB-protocol server runs its H2 backend (data on disk, as `npm start` does): the memory
// backend's 768 MB heap does not hold 100,000 invoices with their rollups (measured: it runs out at ~82,000).
import { performance } from 'node:perf_hooks';
import { stopAll } from '../scripts/infra.ts';
import { rng, SizeTable, startInvoicesOnH2 } from './invoices-h2.ts';
import { testPrincipal } from '../shared/src/testing.ts';
import { ALL_TIME, Grain, rollupId } from '../subgraphs/invoices/src/books/rollup-store.ts';
import { addDays } from '../subgraphs/invoices/src/lib/money.ts';
import { localDate } from '../shared/src/periods.ts';

const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 15);
// Data ends today, as a live workspace's does (the records walk starts from today).
const END = localDate(new Date());
const CUSTOMERS = 200;

const sg = await startInvoicesOnH2('metrics');

async function seed(workspace: string, n: number): Promise<void> {
  const rand = rng(n);
  const roll = new Map<string, { _id: string; workspace: string; currency: string; grain: string; period: string; v: Record<string, number>; c: Record<string, Record<string, number>>; n: Record<string, string>; e?: Record<string, number>; applied: string[] }>();
  const addDue = (day: string, due: string, amount: number) => {
    for (const [grain, period] of [[Grain.DueDay, due], [Grain.DueMonth, due.slice(0, 7)]] as const) {
      const id = rollupId(workspace, 'COP', grain, period);
      const doc = roll.get(id) ?? { _id: id, workspace, currency: 'COP', grain, period, v: {}, c: {}, n: {}, e: {}, applied: [] };
      doc.e![day] = (doc.e![day] ?? 0) + amount;
      roll.set(id, doc);
    }
  };
  const add = (day: string, inc: Record<string, number>, customer?: { id: string; name: string; inc: Record<string, number> }) => {
    for (const [grain, period] of [[Grain.Day, day], [Grain.Month, day.slice(0, 7)], [Grain.AllTime, ALL_TIME]] as const) {
      const id = rollupId(workspace, 'COP', grain, period);
      const doc = roll.get(id) ?? { _id: id, workspace, currency: 'COP', grain, period, v: {}, c: {}, n: {}, applied: [] };
      for (const [k, v] of Object.entries(inc)) doc.v[k] = (doc.v[k] ?? 0) + v;
      if (customer) {
        const c = (doc.c[customer.id] ??= {});
        for (const [k, v] of Object.entries(customer.inc)) c[k] = (c[k] ?? 0) + v;
        doc.n[customer.id] = customer.name;
      }
      roll.set(id, doc);
    }
  };
  const recent = new Map<string, string[]>();
  const batch: Record<string, unknown>[] = [];
  const flush = async () => {
    if (batch.length) await sg.db.collection('invoices').insertMany(batch.splice(0) as never[], { ordered: false });
  };
  for (let i = 0; i < n; i++) {
    const issue = addDays(END, -Math.floor(rand() * 365));
    const due = addDays(issue, 30);
    const c = Math.floor(rand() * CUSTOMERS);
    const customer = `pty_c${c}`;
    const customerName = `Cliente ${c}`;
    const subtotal = 100000 + Math.floor(rand() * 50000000);
    const tax = Math.round(subtotal * 0.19);
    const total = subtotal + tax;
    const r = rand();
    const paid = r < 0.85 ? total : r < 0.9 ? Math.floor(total / 2) : 0;
    const payDay = addDays(issue, Math.floor(rand() * 40));
    const settled = paid > 0 && payDay <= END;
    const balance = total - (settled ? paid : 0);
    const status = balance === 0 ? 'paid' : balance < total ? 'partially_paid' : 'posted';
    const id = `inv_b${n}_${i}`;
    const number = `SETP${990000000 + i}`;
    batch.push({
      _id: id, workspace, kind: 'invoice', status, number, number_seq: 990000000 + i, number_key: `${workspace}:invoice:${number}`,
      customer_id: customer, customer: { name: customerName, tax_id: null, email: null }, search_lc: `${number} ${customerName}`.toLowerCase(),
      currency: 'COP', issue_date: issue, issue_time: '10:00:00-05:00', due_date: due,
      lines: [{ item_id: null, description: 'Servicio', quantity: 1, unit: '94', unit_price: subtotal, discount_bps: 0, tax_rate_ppm: 190000, withholdings: [], subtotal, tax, total }],
      withholding_rates: [], subtotal, tax_total: tax, total, withholdings: [], withholding_total: 0, amount_due: total,
      paid: settled ? paid : 0, credited: 0, balance, settlements: settled ? [{ ref: `pay_${id}`, kind: 'payment', date: payDay, amount: paid }] : [],
      closed_on: balance === 0 ? payDay : null, cufe: 'x'.repeat(96), credit_of: null, concept: null, credit_notes: [], journal_entry_id: `je_${id}`,
      authority: null, source: null, post_lock: null, rev: 2, pending_rollups: [], pending_count: 0, notes: null, posted_at: new Date(`${issue}T15:00:00Z`),
      created_at: new Date(`${issue}T15:00:00Z`), updated_at: new Date(`${issue}T15:00:00Z`),
    });
    add(issue, { revenue: subtotal, invoiced: total, ar: total, invoices: 1, [`status_${status}`]: 1 }, { id: customer, name: customerName, inc: { revenue: subtotal, invoiced: total } });
    addDue(issue, due, total);
    recent.set(issue, [...(recent.get(issue) ?? []), id]);
    if (settled) {
      add(payDay, { collected: paid, ar: -paid, payments: 1 });
      addDue(payDay, due, -paid);
    }
    if (batch.length >= 2000) await flush();
  }
  await flush();
  // The all-currency document counts (records totals), as the rollup code keeps them.
  const all = roll.get(rollupId(workspace, 'COP', Grain.AllTime, ALL_TIME))!;
  const counts = Object.fromEntries(Object.entries(all.v).filter(([k]) => k.startsWith('status_') || k === 'invoices' || k === 'payments'));
  roll.set(rollupId(workspace, '*', Grain.AllTime, ALL_TIME), { _id: rollupId(workspace, '*', Grain.AllTime, ALL_TIME), workspace, currency: '*', grain: Grain.AllTime, period: ALL_TIME, v: counts, c: {}, n: {}, applied: [] });
  const docs = [...roll.values()];
  for (let i = 0; i < docs.length; i += 2000) await sg.db.collection('rollups').insertMany(docs.slice(i, i + 2000) as never[], { ordered: false });
  await sg.db.collection('recent_index').insertMany([...recent.entries()].map(([day, ids]) => ({ _id: `${workspace}|invoices|${day}`, ids })) as never[]);
  await sg.db.collection('einvoicing_settings').insertOne({ _id: workspace, currency: 'COP' } as never);
  console.log(`  seeded ${n} invoices, ${docs.length} rollup documents`);
}

const QUERIES: [string, string, Record<string, unknown>][] = [
  ['metric', 'revenue 90 d by day', { metric: 'revenue', from: addDays(END, -89), to: END }],
  ['metric', 'revenue 366 d by month + previous year', { metric: 'revenue', from: addDays(END, -365), to: END, interval: 'month', compare: 'previous_year' }],
  ['metric', 'ar_outstanding 366 d by month', { metric: 'ar_outstanding', from: addDays(END, -365), to: END, interval: 'month' }],
  ['metric', 'invoices_status 90 d', { metric: 'invoices_status', from: addDays(END, -89), to: END }],
  ['metric', 'top_customers 366 d, 10', { metric: 'top_customers', from: addDays(END, -365), to: END, limit: 10 }],
  ['metric', 'ar_aging at as_of', { metric: 'ar_aging', as_of: END }],
  ['records', 'records invoices latest 8', { source: 'invoices' }],
  ['records', 'records invoices status=posted', { source: 'invoices', status: 'posted' }],
  ['records', 'records invoices search', { source: 'invoices', search: 'cliente 17' }],
];

const table = new SizeTable(42);
try {
  for (const n of sizes) {
    const owner = testPrincipal();
    console.log(`workspace with ${n} invoices`);
    await seed(owner.workspace, n);
    for (const [kind, label, q] of QUERIES.filter(([, l]) => !process.env.BENCH_ONLY || l.includes(process.env.BENCH_ONLY))) {
      const query = kind === 'metric' ? 'query($q: JSON!) { r: invoicesMetric(query: $q) }' : 'query($q: JSON!) { r: invoicesRecords(query: $q) }';
      const times: number[] = [];
      for (let i = 0; i < runs + 3; i++) {
        const t = performance.now();
        const res = await sg.graphql(query, { q }, owner);
        if (res.body.errors) throw new Error(`${label}: ${JSON.stringify(res.body.errors)}`);
        if (i >= 3) times.push(performance.now() - t);
      }
      table.record(label, n, times);
    }
  }
  table.print(sizes, 'invoices');
} finally {
  await sg.close();
  await stopAll();
}
