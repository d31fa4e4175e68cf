// `node bench/top-parties.ts`: top_customers' read (issue 33) with the leaders of days and months
// (books/party-leaders.ts `topParties`) beside the read of every party of the window it replaces
// (`topFromEveryParty`, the fallback), side by side in the same run, on workspaces of 1,000 and
// 20,000 customers with as many invoices over a year (BENCH_SIZES), every invoice of one amount as
// bench/scale.ts seeds them, the customers drawn uniformly (thousands tie at one invoice) or skewed
// (index ⌊n·u⁴⌋, as BENCH_PARTY_SKEW=1 in bench/scale.ts). The rollup documents are those the posts
// would have written (`rollupChanges`, inserted in bulk), the leaders built by `backfillLeaders`.
// Windows: the default 90 days and 366 days; limit 5. Prints p50 / p95 per read and which way the
// leaders' read answered; checks the two answers are equal. BENCH_RUNS (default 15) runs each,
// alternated. MongoDB-protocol server with its H2 backend, in process (no HTTP hop).
import { performance } from 'node:perf_hooks';
import { stopAll } from '../scripts/infra.ts';
import { pct, rng, startInvoicesOnH2 } from './invoices-h2.ts';
import { rollupChanges } from '../subgraphs/invoices/src/books/rollup-intents.ts';
import { backfillLeaders, topFromEveryParty, topParties } from '../subgraphs/invoices/src/books/party-leaders.ts';
import { addDays } from '../subgraphs/invoices/src/lib/money.ts';
import { localDate } from '../shared/src/periods.ts';

const sizes = (process.env.BENCH_SIZES ?? '1000,20000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 15);
const TODAY = localDate(new Date());
const AMOUNT = 15_000_000;

const sg = await startInvoicesOnH2('top-parties');
const db = sg.db;

async function seed(workspace: string, n: number, skew: boolean): Promise<void> {
  const rand = rng(n + (skew ? 1 : 0));
  const docs = new Map<string, Record<string, any>>();
  const put = (doc: Record<string, any>, path: string, value: number | string, add: boolean) => {
    const keys = path.split('.');
    let at = doc;
    for (const k of keys.slice(0, -1)) at = at[k] ??= {};
    const last = keys[keys.length - 1];
    at[last] = add ? (at[last] ?? 0) + (value as number) : value;
  };
  for (let i = 0; i < n; i++) {
    const c = Math.min(n - 1, Math.floor(n * (skew ? rand() ** 4 : rand())));
    const day = addDays(TODAY, -Math.floor(rand() * 365));
    const customer = { id: `pty_${String(c).padStart(6, '0')}`, name: `Cliente ${c}`, inc: { revenue: AMOUNT, invoiced: AMOUNT * 1.19 } };
    for (const change of rollupChanges(workspace, { day, currency: 'COP', inc: { revenue: AMOUNT, invoiced: AMOUNT * 1.19, invoices: 1 }, customer })) {
      const doc = docs.get(change._id) ?? { _id: change._id, workspace, currency: change.currency, grain: change.grain, period: change.period, applied: [] };
      for (const [k, v] of Object.entries(change.inc)) put(doc, k, v, true);
      for (const [k, v] of Object.entries(change.set ?? {})) put(doc, k, v, false);
      docs.set(change._id, doc);
    }
  }
  const all = [...docs.values()];
  for (let i = 0; i < all.length; i += 2_000) await db.collection('rollups').insertMany(all.slice(i, i + 2_000) as never[]);
  await backfillLeaders(db, workspace);
}

const rows: string[] = [];
for (const skew of [false, true]) {
  for (const n of sizes) {
    const workspace = `ws_top_${skew ? 'skew' : 'flat'}_${n}`;
    const t0 = performance.now();
    await seed(workspace, n, skew);
    console.log(`seeded ${workspace} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (const days of [90, 366]) {
      const from = addDays(TODAY, -(days - 1));
      const timesNew: number[] = [];
      const timesOld: number[] = [];
      let via = '';
      for (let r = -2; r < runs; r++) {
        let t = performance.now();
        const a = await topParties(db, workspace, 'COP', from, TODAY, 'revenue', 5);
        const dNew = performance.now() - t;
        t = performance.now();
        const b = await topFromEveryParty(db, workspace, 'COP', from, TODAY, 'revenue', 5);
        const dOld = performance.now() - t;
        if (JSON.stringify(a.rows) !== JSON.stringify(b)) throw new Error(`${workspace} ${days} d: leaders ${JSON.stringify(a.rows)} ≠ every party ${JSON.stringify(b)}`);
        via = a.via;
        if (r >= 0) {
          timesNew.push(dNew);
          timesOld.push(dOld);
        }
      }
      const row = `| ${skew ? 'skewed' : 'uniform'} | ${n} | ${days} d | ${pct(timesOld, 50).toFixed(1)} / ${pct(timesOld, 95).toFixed(1)} | ${pct(timesNew, 50).toFixed(1)} / ${pct(timesNew, 95).toFixed(1)} | ${via} |`;
      console.log(row);
      rows.push(row);
    }
  }
}
console.log('\n| customers | size | window | every party p50 / p95 ms | leaders p50 / p95 ms | leaders answered via |\n| --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(r);
await sg.close();
await stopAll();
