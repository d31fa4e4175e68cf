// `node bench/payables.ts`: how the payables and bank read-outs of
// issue 16 grow with the data. Seeds workspaces of 1,000 and 100,000 posted bills (one year, 300
// vendors; 80 % paid, 5 % partly paid, 15 % open; 2 of 3 lines on expense accounts) and as many
// bank transactions on one account (75 % reconciled), then times the invoices subgraph's
// `invoicesMetric` (expenses, ap_outstanding, ap_aging, bills_status, top_vendors,
// bank_reconciliation) and the `payables` agenda lane over HTTP (real server, MongoDB-protocol
// server with its H2 backend, as `npm start` runs it). Prints p50 / p95 per query and size.
//
// How the big workspace is seeded: directly into the database, in bulk (insertMany of 2,000), the
// bill documents and the rollup documents the tools would have written for them — the same
// namespaces and counters (`ap:COP` day/month/all grains with `expenses`, `purchases`, `ap`,
// `bill_<status>`, per-vendor `spend`; the due-date grains `due`/`duem`; `bank:<account>` with
// `unrec_*`/`rec_*` on each transaction's booking date). Replaying 100,000 posts and payments
// through the tools would take most of an hour and measure the write path, not the reads.
// The open bills' due-date index (`bill_due_index`, bills/due.ts) is seeded the same way.
// BENCH_SIZES=1000,100000 chooses sizes; BENCH_RUNS (default 15) timed runs per query.
import { performance } from 'node:perf_hooks';
import { stopAll } from '../scripts/infra.ts';
import { rng, SizeTable, startInvoicesOnH2 } from './invoices-h2.ts';
import { testPrincipal } from '../shared/src/testing.ts';
import { ALL_TIME, Grain, rollupId } from '../subgraphs/invoices/src/books/rollup-store.ts';
import { addDays } from '../subgraphs/invoices/src/lib/money.ts';
import { localDate } from '../shared/src/periods.ts';

const sizes = (process.env.BENCH_SIZES ?? '1000,100000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 15);
const END = localDate(new Date());
const VENDORS = 300;

const sg = await startInvoicesOnH2('payables');

type Roll = { _id: string; workspace: string; currency: string; grain: string; period: string; v: Record<string, number>; c: Record<string, Record<string, number>>; n: Record<string, string>; e?: Record<string, number>; applied: string[] };

async function seed(workspace: string, n: number): Promise<string> {
  const rand = rng(n);
  const roll = new Map<string, Roll>();
  const add = (ns: string, day: string, inc: Record<string, number>, vendor?: { id: string; name: string; inc: Record<string, number> }) => {
    for (const [grain, period] of [[Grain.Day, day], [Grain.Month, day.slice(0, 7)], [Grain.AllTime, ALL_TIME]] as const) {
      const id = rollupId(workspace, ns, grain, period);
      const doc = roll.get(id) ?? { _id: id, workspace, currency: ns, grain, period, v: {}, c: {}, n: {}, applied: [] };
      for (const [k, v] of Object.entries(inc)) doc.v[k] = (doc.v[k] ?? 0) + v;
      if (vendor) {
        const c = (doc.c[vendor.id] ??= {});
        for (const [k, v] of Object.entries(vendor.inc)) c[k] = (c[k] ?? 0) + v;
        doc.n[vendor.id] = vendor.name;
      }
      roll.set(id, doc);
    }
  };
  const addDue = (day: string, due: string, amount: number) => {
    for (const [grain, period] of [[Grain.DueDay, due], [Grain.DueMonth, due.slice(0, 7)]] as const) {
      const id = rollupId(workspace, 'ap:COP', grain, period);
      const doc = roll.get(id) ?? { _id: id, workspace, currency: 'ap:COP', grain, period, v: {}, c: {}, n: {}, e: {}, applied: [] };
      doc.e![day] = (doc.e![day] ?? 0) + amount;
      roll.set(id, doc);
    }
  };
  const batch: Record<string, unknown>[] = [];
  // The due-date index of open bills (bills/due.ts) the posts would have written: ids per due day.
  const dueIndex = new Map<string, string[]>();
  const flush = async (collection: string) => {
    if (batch.length) await sg.db.collection(collection).insertMany(batch.splice(0) as never[], { ordered: false });
  };
  for (let i = 0; i < n; i++) {
    const issue = addDays(END, -Math.floor(rand() * 365));
    const due = addDays(issue, 30);
    const v = Math.floor(rand() * VENDORS);
    const vendorId = `pty_v${v}`;
    const vendorName = `Proveedor ${v}`;
    const expenseLine = rand() < 2 / 3;
    const subtotal = 100000 + Math.floor(rand() * 50000000);
    const tax = Math.round(subtotal * 0.19);
    const total = subtotal + tax;
    const retefuente = Math.round(subtotal * 0.025);
    const due_amount = total - retefuente;
    const r = rand();
    const paid = r < 0.8 ? due_amount : r < 0.85 ? Math.floor(due_amount / 2) : 0;
    const payDay = addDays(issue, Math.floor(rand() * 40));
    const settled = paid > 0 && payDay <= END;
    const balance = due_amount - (settled ? paid : 0);
    const status = balance === 0 ? 'paid' : balance < due_amount ? 'partially_paid' : 'posted';
    const id = `bil_b${n}_${i}`;
    const number = `FE-${i}`;
    const account = expenseLine ? '5135' : '1528';
    batch.push({
      _id: id, workspace, kind: 'invoice', credit_of: null, status, vendor_id: vendorId, vendor: { name: vendorName, tax_id: null }, supplier_number: number,
      supplier_key: `${workspace}|${vendorId}|${number}`, search_lc: `${number} ${vendorName}`.toLowerCase(), currency: 'COP', issue_date: issue, due_date: due,
      lines: [{ description: 'Compra', account, quantity: 1, unit_price: subtotal, discount_bps: 0, tax_rate_ppm: 190000, subtotal, tax, total }],
      withholding_rates: [{ type: 'retefuente', rate_ppm: 25000 }], subtotal, tax_total: tax, total,
      withholdings: [{ type: 'retefuente', rate_ppm: 25000, base: subtotal, amount: retefuente }], withholding_total: retefuente, amount_due: due_amount,
      paid: settled ? paid : 0, balance, settlements: settled ? [{ ref: `bpy_${id}`, date: payDay, amount: paid }] : [], closed_on: balance === 0 ? payDay : null,
      journal_entry_id: `je_${id}`, post_lock: null, rev: 2, pending_rollups: [], pending_count: 0, notes: null, posted_at: new Date(`${issue}T15:00:00Z`),
      created_at: new Date(`${issue}T15:00:00Z`), updated_at: new Date(`${issue}T15:00:00Z`),
    });
    add('ap:COP', issue, { expenses: expenseLine ? subtotal : 0, purchases: subtotal, billed: total, ap: due_amount, bills: 1, [`bill_${status}`]: 1 }, { id: vendorId, name: vendorName, inc: { spend: subtotal } });
    addDue(issue, due, due_amount);
    if (status !== 'paid') dueIndex.set(due, [...(dueIndex.get(due) ?? []), id]);
    if (settled) {
      add('ap:COP', payDay, { ap: -paid, disbursed: paid, bill_payments: 1 });
      addDue(payDay, due, -paid);
    }
    if (batch.length >= 2000) await flush('bills');
  }
  await flush('bills');
  const dueDocs = [...dueIndex].map(([date, ids]) => ({ _id: `${workspace}|${date}`, workspace, date, ids }));
  for (let i = 0; i < dueDocs.length; i += 2000) await sg.db.collection('bill_due_index').insertMany(dueDocs.slice(i, i + 2000) as never[], { ordered: false });
  // One bank account with n transactions over the year, 75 % reconciled (counters on booking dates).
  const bankId = `bnk_bench${n}`;
  await sg.db.collection('bank_accounts').insertOne({
    _id: bankId, workspace, name: 'Corriente', bank_name: 'Bancolombia', account_number: `9${n}`, number_key: `${workspace}|9${n}`, search_lc: 'corriente bancolombia',
    currency: 'COP', puc_account: '111005', opening_balance: 0, opening_date: addDays(END, -365), created_at: new Date(), updated_at: new Date(),
  } as never);
  for (let i = 0; i < n; i++) {
    const day = addDays(END, -Math.floor(rand() * 365));
    const amount = 1000 + Math.floor(rand() * 10000000);
    add(`bank:${bankId}`, day, rand() < 0.75 ? { rec_n: 1, rec_amt: amount } : { unrec_n: 1, unrec_amt: amount });
  }
  const docs = [...roll.values()];
  for (let i = 0; i < docs.length; i += 2000) await sg.db.collection('rollups').insertMany(docs.slice(i, i + 2000) as never[], { ordered: false });
  await sg.db.collection('einvoicing_settings').insertOne({ _id: workspace, currency: 'COP' } as never);
  console.log(`  seeded ${n} bills, ${n} bank transactions' counters, ${docs.length} rollup documents`);
  return bankId;
}

const QUERIES: [string, Record<string, unknown>][] = [
  ['expenses 90 d by day', { metric: 'expenses', from: addDays(END, -89), to: END }],
  ['expenses 366 d by month + previous period', { metric: 'expenses', from: addDays(END, -365), to: END, interval: 'month', compare: 'previous_period' }],
  ['ap_outstanding 366 d by month', { metric: 'ap_outstanding', from: addDays(END, -365), to: END, interval: 'month' }],
  ['ap_aging at as_of', { metric: 'ap_aging', as_of: END }],
  ['bills_status 90 d', { metric: 'bills_status', from: addDays(END, -89), to: END }],
  ['top_vendors 366 d, 10', { metric: 'top_vendors', from: addDays(END, -365), to: END, limit: 10 }],
  ['bank_reconciliation (all time)', { metric: 'bank_reconciliation' }],
  ['bank_reconciliation 366 d by month + previous period', { metric: 'bank_reconciliation', from: addDays(END, -365), to: END, interval: 'month', compare: 'previous_period' }],
  ['payables lane 30 d + overdue (agenda)', { lane: true, from: END, to: addDays(END, 30), limit: 50, overdue: true }],
];

const table = new SizeTable(52);
try {
  for (const n of sizes) {
    const owner = testPrincipal();
    console.log(`workspace with ${n} bills`);
    const t0 = performance.now();
    await seed(owner.workspace, n);
    console.log(`  seeding took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (const [label, q] of QUERIES) {
      const { lane, ...window } = q;
      const query = lane ? 'query($w: JSON!) { r: invoicesAgenda(lane: "payables", window: $w) }' : 'query($q: JSON!) { r: invoicesMetric(query: $q) }';
      const vars = lane ? { w: window } : { q };
      const times: number[] = [];
      for (let i = 0; i < runs + 3; i++) {
        const t = performance.now();
        const res = await sg.graphql(query, vars, owner);
        if (res.body.errors) throw new Error(`${label}: ${JSON.stringify(res.body.errors)}`);
        if (lane && i === 0) console.log(`  ${label}: ${res.body.data.r.length} entries (limit ${window.limit})`);
        if (i >= 3) times.push(performance.now() - t);
      }
      table.record(label, n, times);
    }
  }
  table.print(sizes, 'bills');
} finally {
  await sg.close();
  await stopAll();
}
