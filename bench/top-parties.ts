// `node bench/top-parties.ts`: top_customers' read (issue 33) with the leaders of days and months
// (books/party-leaders.ts `topParties`) beside the read of every party of the window it replaces
// (`topFromEveryParty`, the fallback), side by side in the same run, on workspaces of 1,000 and
// 20,000 customers with as many invoices over a year (BENCH_SIZES), every invoice of one amount as
// bench/scale.ts seeds them, the customers drawn uniformly (thousands tie at one invoice) or skewed
// (index ⌊n·u⁴⌋, as BENCH_PARTY_SKEW=1 in bench/scale.ts). The rollup documents are those the posts
// would have written (`rollupChanges`, inserted in bulk), the leaders built by `backfillLeaders`.
// Windows: the default 90 days and 366 days; limit 5. Each run posts one invoice of a customer drawn as
// the seed draws them, dated today (`applyRollupIntent`, as a post does: rollups, leaders, its count
// and log), then four reads, alternated:
// - every party: the fallback alone;
// - afresh (topn10): `topPartiesAfresh` — the leaders tried, every party read when they cannot prove;
// - after the post: `topParties` — the window's kept answer brought up to date by the party posted;
// - unchanged: `topParties` again (the kept answer: one `_id` read).
// Then the day changes (topn12): the window's kept answer is the day before's, and each run moves the
// window one day further (a day the seed left empty, like a new day's first minutes) after posting one
// invoice dated that day; three reads of the moved window, alternated, the moved one first:
// - moved: `topParties` — the day before's kept answer moved by the day that left and the day that came;
// - every party and afresh (topn10): as above, for the same window.
// Then the write: a post's p50 and the count-and-log step alone (`countPartyWrite`), BENCH_RUNS each.
// Prints p50 / p95 per read and which way the reads answered; checks the answers are equal.
// BENCH_RUNS (default 15) runs each. MongoDB-protocol server with its H2 backend, in process (no HTTP hop).
import { performance } from 'node:perf_hooks';
import { stopAll } from '../scripts/infra.ts';
import { pct, rng, startInvoicesOnH2 } from './invoices-h2.ts';
import { applyRollupIntent, rollupChanges, rollupIntent } from '../subgraphs/invoices/src/books/rollup-intents.ts';
import { invoices } from '../subgraphs/invoices/src/modules/invoices/model.ts';
import { backfillLeaders, countPartyWrite, topFromEveryParty, topParties, topPartiesAfresh } from '../subgraphs/invoices/src/books/party-leaders.ts';
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
const dayRows: string[] = [];
const writes: string[] = [];
for (const skew of [false, true]) {
  for (const n of sizes) {
    const workspace = `ws_top_${skew ? 'skew' : 'flat'}_${n}`;
    const t0 = performance.now();
    await seed(workspace, n, skew);
    console.log(`seeded ${workspace} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const rand = rng(n * 7 + (skew ? 1 : 0));
    let posts = 0;
    const postTimes: number[] = [];
    // One invoice of a customer drawn as the seed draws them, dated today: rollups, leaders, count and log, as a post applies them.
    const postOne = async (day = TODAY) => {
      const c = Math.min(n - 1, Math.floor(n * (skew ? rand() ** 4 : rand())));
      const customer = { id: `pty_${String(c).padStart(6, '0')}`, name: `Cliente ${c}`, inc: { revenue: AMOUNT, invoiced: AMOUNT * 1.19 } };
      const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: AMOUNT, invoiced: AMOUNT * 1.19, invoices: 1 }, customer }], new Date())!;
      const t = performance.now();
      await applyRollupIntent(db, invoices(db), `inv_bench_${posts++}`, workspace, intent);
      postTimes.push(performance.now() - t);
    };
    for (const days of [90, 366]) {
      const from = addDays(TODAY, -(days - 1));
      const times: Record<'all' | 'afresh' | 'changed' | 'kept', number[]> = { all: [], afresh: [], changed: [], kept: [] };
      const vias = { afresh: '', changed: '', kept: '' };
      for (let r = -2; r < runs; r++) {
        const timed = async <T>(name: keyof typeof times, f: () => Promise<T>): Promise<T> => {
          const t = performance.now();
          const out = await f();
          if (r >= 0) times[name].push(performance.now() - t);
          return out;
        };
        await postOne();
        const all = await timed('all', () => topFromEveryParty(db, workspace, 'COP', from, TODAY, 'revenue', 5));
        const afresh = await timed('afresh', () => topPartiesAfresh(db, workspace, 'COP', from, TODAY, 'revenue', 5));
        const changed = await timed('changed', () => topParties(db, workspace, 'COP', from, TODAY, 'revenue', 5));
        const kept = await timed('kept', () => topParties(db, workspace, 'COP', from, TODAY, 'revenue', 5));
        for (const [name, a] of [['afresh', afresh], ['changed', changed], ['kept', kept]] as const) {
          if (JSON.stringify(a.rows) !== JSON.stringify(all)) throw new Error(`${workspace} ${days} d ${name}: ${JSON.stringify(a.rows)} ≠ every party ${JSON.stringify(all)}`);
        }
        if (r >= 0) {
          vias.afresh = afresh.via;
          vias.changed = changed.kept ? `kept, ${changed.caughtUp} caught up` : `${changed.via}${changed.tried ? '' : ' (not tried)'}`;
          vias.kept = kept.kept ? `kept, ${kept.caughtUp} caught up` : kept.via;
        }
      }
      const cell = (xs: number[]) => `${pct(xs, 50).toFixed(1)} / ${pct(xs, 95).toFixed(1)}`;
      const row = `| ${skew ? 'skewed' : 'uniform'} | ${n} | ${days} d | ${cell(times.all)} | ${cell(times.afresh)} | ${cell(times.changed)} | ${cell(times.kept)} | ${vias.afresh}; ${vias.changed}; ${vias.kept} |`;
      console.log(row);
      rows.push(row);
      // The day changes: each run the window ends one day later, after one invoice dated that day.
      const moved: Record<'moved' | 'all' | 'afresh', number[]> = { moved: [], all: [], afresh: [] };
      const movedVias = { moved: new Set<string>(), afresh: '' };
      await topParties(db, workspace, 'COP', from, TODAY, 'revenue', 5);
      for (let r = -2; r < runs; r++) {
        const to = addDays(TODAY, r + 3);
        const f = addDays(to, -(days - 1));
        const timed = async <T>(name: keyof typeof moved, g: () => Promise<T>): Promise<T> => {
          const t = performance.now();
          const out = await g();
          if (r >= 0) moved[name].push(performance.now() - t);
          return out;
        };
        await postOne(to);
        const m = await timed('moved', () => topParties(db, workspace, 'COP', f, to, 'revenue', 5));
        const all = await timed('all', () => topFromEveryParty(db, workspace, 'COP', f, to, 'revenue', 5));
        const afresh = await timed('afresh', () => topPartiesAfresh(db, workspace, 'COP', f, to, 'revenue', 5));
        for (const [name, a] of [['moved', m], ['afresh', afresh]] as const) {
          if (JSON.stringify(a.rows) !== JSON.stringify(all)) throw new Error(`${workspace} ${days} d to ${to} ${name}: ${JSON.stringify(a.rows)} ≠ every party ${JSON.stringify(all)}`);
        }
        if (r >= 0) {
          movedVias.moved.add(m.rolled ? `moved ${m.rolled} d, ${m.caughtUp} read` : `${m.via}${m.tried ? '' : ' (not tried)'}`);
          movedVias.afresh = afresh.via;
        }
      }
      const dayRow = `| ${skew ? 'skewed' : 'uniform'} | ${n} | ${days} d | ${cell(moved.all)} | ${cell(moved.afresh)} | ${cell(moved.moved)} | ${movedVias.afresh}; ${[...movedVias.moved].join(', ')} |`;
      console.log(dayRow);
      dayRows.push(dayRow);
    }
    const countTimes: number[] = [];
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      await countPartyWrite(db, workspace, 'COP', TODAY, { id: 'pty_000001', name: 'Cliente 1', inc: { revenue: AMOUNT } });
      countTimes.push(performance.now() - t);
    }
    const w = `| ${skew ? 'skewed' : 'uniform'} | ${n} | ${pct(postTimes, 50).toFixed(1)} / ${pct(postTimes, 95).toFixed(1)} | ${pct(countTimes, 50).toFixed(1)} / ${pct(countTimes, 95).toFixed(1)} |`;
    console.log(w);
    writes.push(w);
  }
}
console.log('\n| customers | size | window | every party p50 / p95 ms | afresh (topn10) | after the post (this change) | unchanged | via: afresh; after the post; unchanged |\n| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(r);
console.log('\nThe first read after the day changed (one invoice dated the new day before it):\n| customers | size | window | every party p50 / p95 ms | afresh (topn10) | moved from the day before (topn12) | via: afresh; moved |\n| --- | --- | --- | --- | --- | --- | --- |');
for (const r of dayRows) console.log(r);
console.log('\n| customers | size | a post p50 / p95 ms | its count-and-log step alone p50 / p95 ms |\n| --- | --- | --- | --- |');
for (const w of writes) console.log(w);
await sg.close();
await stopAll();
