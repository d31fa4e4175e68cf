// `node bench/lists.ts`: what `parties.list` costs as a workspace grows (CONTRACT §9 bounded
// lists). Seeds one workspace with 100 parties and another with 100,000 (straight through the
// driver, positions taken in bulk by the same counter helper the tools use), starts the crm
// subgraph on that database and times `parties.list` over HTTP through the real tool pipeline:
// the first page and a page deep in the list (by cursor), p50 of BENCH_RUNS (default 30) calls
// each, and the ratio big/small (goal ≤ 1.5). Then times the small workspace's first page while
// BENCH_HAMMER (default 4) clients read another small workspace, then the big one, as fast as they can
// (the same load on the same cores; the ratio of the two says whether the big one's size reaches it). For comparison, the
// query lists ran before paging (sort + skip + limit, plus a count) on the same data, 3 runs.
// BENCH_BACKEND=h2 (default, as `npm start` runs) or memory; BENCH_BIG=100000 sets the big size.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildMongoServerJar, ensureJavaAndMaven, repoRoot, startMongo, stopAll } from '../scripts/infra.ts';
import { assignPositions, encodeCursor, positionKey } from '../shared/src/paging.ts';
import { startTestSubgraph, testPrincipal } from '../shared/src/testing.ts';
import { createServer, name } from '../subgraphs/crm/src/server.ts';
import { parties } from '../subgraphs/crm/src/modules/parties/model.ts';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const bigSize = Number(process.env.BENCH_BIG ?? 100_000);
const hammerClients = Number(process.env.BENCH_HAMMER ?? 4);
const backend = (process.env.BENCH_BACKEND ?? 'h2') as 'h2' | 'memory';
const out = path.join(repoRoot, 'test-output', 'bench');

await ensureJavaAndMaven();
await buildMongoServerJar();
const dataFile = path.join(out, 'lists-h2.mv');
rmSync(dataFile, { force: true });
const mongo = await startMongo(backend === 'h2' ? { backend, file: dataFile, logFile: path.join(out, 'mongo-lists.log') } : { backend, logFile: path.join(out, 'mongo-lists.log') });
process.env.MONGO_URL = mongo.url;
const crm = await startTestSubgraph(name, createServer);

const small = testPrincipal();
const big = testPrincipal();
const neighbour = testPrincipal();

/** Inserts `n` parties into a workspace, 1,000 per insertMany, positions taken per chunk. */
async function seed(workspace: string, n: number): Promise<void> {
  const model = parties(crm.db);
  const base = Date.now() - n * 1000;
  for (let done = 0; done < n; done += 1000) {
    const chunk = Math.min(1000, n - done);
    const first = await assignPositions(crm.db, 'parties', workspace, chunk);
    const docs = Array.from({ length: chunk }, (_, i) => {
      const k = done + i;
      const pos = first + i;
      const id = `pty_bench_${randomBytes(6).toString('hex')}`;
      const name = `Cliente ${k} ${randomBytes(2).toString('hex')}`;
      const at = new Date(base + k * 1000);
      return {
        _id: id, workspace, kind: k % 4 === 0 ? 'vendor' : 'customer', name, name_lc: name.toLowerCase(), tax_id: null, tax_key: `none:${id}`,
        email: null, phone: null, addresses: [], contacts: [], tags: [], status: 'active', created_at: at, updated_at: at,
        pos, pos_key: positionKey('parties', workspace, pos),
      };
    });
    await model.collection.insertMany(docs as any[], { ordered: false });
  }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function timeList(principal: typeof small, input: Record<string, unknown>, count = runs): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const r = await crm.call('parties.list', input, principal);
    times.push(performance.now() - t);
    if (!r.ok || r.output.rows.length === 0) throw new Error(`parties.list failed: ${JSON.stringify(r).slice(0, 300)}`);
  }
  return times;
}

try {
  let t0 = performance.now();
  await seed(small.workspace, 100);
  await seed(big.workspace, bigSize);
  await seed(neighbour.workspace, 100);
  console.log(`backend ${backend}; seeded 100 + ${bigSize.toLocaleString('en')} parties in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // Warm up both (JIT, connection pool).
  await timeList(small, { limit: 20 }, 5);
  await timeList(big, { limit: 20 }, 5);

  const results: Record<string, number> = {};
  for (const [label, principal, n] of [['100', small, 100], [bigSize.toLocaleString('en'), big, bigSize]] as const) {
    const first = pct(await timeList(principal, { limit: 20 }), 50);
    // Deep: a cursor half-way down the list (the same encoding the tool hands out).
    const deepCursor = encodeCursor('parties', principal.workspace, Math.floor(n / 2));
    const deep = pct(await timeList(principal, { limit: 20, cursor: deepCursor }), 50);
    const filtered = pct(await timeList(principal, { limit: 20, kind: 'vendor' }), 50);
    results[`${label}:first`] = first;
    results[`${label}:deep`] = deep;
    console.log(`parties.list ${label.padStart(7)} parties: first page p50 ${ms(first)}, page at the middle p50 ${ms(deep)}, kind=vendor p50 ${ms(filtered)} (${runs} runs each)`);
  }
  const bigLabel = bigSize.toLocaleString('en');
  console.log(`ratio ${bigLabel}/100: first page ${(results[`${bigLabel}:first`] / results['100:first']).toFixed(2)}×, deep page ${(results[`${bigLabel}:deep`] / results['100:deep']).toFixed(2)}× (goal ≤ 1.5×)`);

  // The small workspace's list while other clients hammer a neighbour as fast as they can: first a
  // neighbour of the same small size (the baseline: the same load on the same 2 cores), then the
  // big one. Independent of the neighbour's size means the two p50s match (ratio ≈ 1).
  async function underLoad(target: typeof small, size: number): Promise<{ p50: number; p95: number; served: number; perSecond: number }> {
    let stop = false;
    let served = 0;
    const hammer = Array.from({ length: hammerClients }, async () => {
      while (!stop) {
        const cursor = encodeCursor('parties', target.workspace, 1 + Math.floor(Math.random() * size));
        await crm.call('parties.list', { limit: 50, cursor }, target);
        served++;
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    const start = performance.now();
    const times = await timeList(small, { limit: 20 });
    const seconds = (performance.now() - start) / 1000;
    stop = true;
    await Promise.all(hammer);
    return { p50: pct(times, 50), p95: pct(times, 95), served, perSecond: served / seconds };
  }
  const besideSmall = await underLoad(neighbour, 100);
  const besideBig = await underLoad(big, bigSize);
  for (const [label, r] of [['another 100-party workspace', besideSmall], [`the ${bigLabel}-party workspace`, besideBig]] as const) {
    console.log(`parties.list 100 parties while ${hammerClients} clients read ${label}: p50 ${ms(r.p50)}, p95 ${ms(r.p95)} (neighbour pages served alongside: ${r.served}, ~${r.perSecond.toFixed(0)}/s)`);
  }
  console.log(`ratio beside the big one / beside a small one: p50 ${(besideBig.p50 / besideSmall.p50).toFixed(2)}× (goal ≈ 1: a busy workspace's size does not reach its neighbours)`);

  // Before paging: sort + skip + limit and a count, on the same data (3 runs).
  const model = parties(crm.db);
  const before: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await Promise.all([
      model.find({ workspace: big.workspace }).sort({ created_at: -1, _id: -1 }).skip(0).limit(20).lean(),
      model.countDocuments({ workspace: big.workspace }),
    ]);
    before.push(performance.now() - t);
  }
  console.log(`before paging (find.sort.skip.limit + countDocuments), ${bigLabel} parties: ${before.map(ms).join(', ')}`);
} finally {
  await crm.close().catch(() => undefined);
  await stopAll();
}
process.exit(0);
