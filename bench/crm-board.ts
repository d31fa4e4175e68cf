// `node bench/crm-board.ts`: what the kanban board of a pipeline costs as the pipeline grows (issue
// 34: the board of a pipeline with 10,000 deals renders within 1.5× of one with 100). Seeds two
// workspaces with the same five-stage pipeline, one with 100 deals and one with 10,000 (BENCH_BIG),
// spread over its stages — straight through the driver, as the tools store them: the deals with
// their list positions, the columns with their sorted cards, counts and sums — starts the crm
// subgraph on that database and times the board (the `crmBoard` graph field the kanban block reads,
// 25 cards per column) over HTTP, small and big interleaved, p50 and p90 of BENCH_RUNS (default 30)
// each; then the same for one `deals.move` through the tool pipeline (a write reads and rewrites
// the column it lands in, so its cost does grow with the column). Prints the ratios big/small.
// BENCH_BACKEND=h2 (default, as `npm start` runs) or memory.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateNKeysBetween } from 'fractional-indexing';
import { buildMongoServerJar, ensureJavaAndMaven, repoRoot, startMongo, stopAll } from '../scripts/infra.ts';
import { assignPositions, positionKey, type Principal } from '../shared/src/index.ts';
import { startTestSubgraph, testPrincipal } from '../shared/src/testing.ts';
import { createServer, name } from '../subgraphs/crm/src/server.ts';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const bigSize = Number(process.env.BENCH_BIG ?? 10_000);
const backend = (process.env.BENCH_BACKEND ?? 'h2') as 'h2' | 'memory';
const out = path.join(repoRoot, 'test-output', 'bench');

await ensureJavaAndMaven();
await buildMongoServerJar();
const dataFile = path.join(out, 'crm-board-h2.mv');
rmSync(dataFile, { force: true });
const mongo = await startMongo(backend === 'h2' ? { backend, file: dataFile, logFile: path.join(out, 'mongo-crm-board.log') } : { backend, logFile: path.join(out, 'mongo-crm-board.log') });
process.env.MONGO_URL = mongo.url;
const crm = await startTestSubgraph(name, createServer);

async function call(tool: string, input: unknown, who: Principal) {
  const r = await crm.call(tool, input, who);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.message}`);
  return r.output;
}

/** A workspace with the bench's pipeline and `n` deals spread over its five stages (newest on top of each column). */
async function seed(n: number): Promise<{ who: Principal; stages: string[]; sample: string }> {
  const who = testPrincipal();
  const { pipeline } = await call('pipelines.create', {
    name: 'Ventas', stages: [
      { name: 'Prospecto', kind: 'open', probability_ppm: 100_000, rotting_days: 14 }, { name: 'Propuesta', kind: 'open', probability_ppm: 400_000 },
      { name: 'Negociación', kind: 'open', probability_ppm: 700_000 }, { name: 'Ganado', kind: 'won' }, { name: 'Perdido', kind: 'lost' },
    ],
  }, who);
  const stages: string[] = pipeline.stages.map((s: { id: string }) => s.id);
  const now = new Date();
  const perStage = stages.map((_, i) => Math.floor(n / stages.length) + (i < n % stages.length ? 1 : 0));
  let sample = '';
  for (const [si, stageId] of stages.entries()) {
    const count = perStage[si];
    const keys = generateNKeysBetween(null, null, count);
    const cards: { k: string; i: string }[] = [];
    let amount = 0;
    for (let done = 0; done < count; done += 1000) {
      const chunk = Math.min(1000, count - done);
      const first = await assignPositions(crm.db, 'crm_deals', who.workspace, chunk);
      const docs = Array.from({ length: chunk }, (_, j) => {
        const id = `dl_bench_${randomBytes(6).toString('hex')}`;
        const k = keys[done + j];
        const value = (1 + ((done + j) % 97)) * 100_000;
        amount += value;
        cards.push({ k, i: id });
        const kind = si === 3 ? 'won' : si === 4 ? 'lost' : 'open';
        return {
          _id: id, workspace: who.workspace, title: `Negocio ${si}-${done + j}`, party_id: null, party_name: null, amount: value, currency: 'COP', owner_id: null,
          expected_close: null, pipeline_id: pipeline.id, stage_id: stageId, status: kind, order_key: k, lines: [], custom: {}, tags: [],
          lost_reason: kind === 'lost' ? 'Precio' : null, lost_note: null, stage_entered_at: now, closed_at: kind === 'open' ? null : now,
          history: [{ from: null, to: stageId, at: now, by: 'bench' }], search_keys: [], version: 1, pending_derived: [], created_at: now, updated_at: now,
          pos: first + j, pos_key: positionKey('crm_deals', who.workspace, first + j),
        };
      });
      await crm.db.collection('crm_deals').insertMany(docs as never[], { ordered: false });
    }
    if (si === 0) sample = cards[Math.floor(cards.length / 2)].i;
    await crm.db.collection('crm_columns').insertOne({ _id: `${who.workspace}|${stageId}`, workspace: who.workspace, pipeline_id: pipeline.id, stage_id: stageId, count, amount, cards, applied: [] } as never);
  }
  return { who, stages, sample };
}

async function board(who: Principal): Promise<number> {
  const t = performance.now();
  const r = await crm.graphql('query($q: JSON!) { crmBoard(query: $q) }', { q: { board: 'pipeline', pipeline: '', limit: 25 } }, who);
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return performance.now() - t;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const seeding = performance.now();
const small = await seed(100);
const big = await seed(bigSize);
console.log(`seeded 100 and ${bigSize} deals in ${((performance.now() - seeding) / 1000).toFixed(1)} s (backend ${backend})`);
for (let i = 0; i < 5; i++) { await board(small.who); await board(big.who); } // warm up both paths
const times = { small: [] as number[], big: [] as number[] };
for (let i = 0; i < runs; i++) {
  times.small.push(await board(small.who));
  times.big.push(await board(big.who));
}
const moves = { small: [] as number[], big: [] as number[] };
for (let i = 0; i < Math.min(runs, 20); i++) {
  for (const [label, ws] of [['small', small], ['big', big]] as const) {
    const t = performance.now();
    await call('deals.move', { id: ws.sample, stage_id: ws.stages[i % 2 ? 1 : 0] }, ws.who);
    moves[label].push(performance.now() - t);
  }
}
const line = (what: string, s: number[], b: number[]) => `${what.padEnd(22)} small p50 ${pct(s, 0.5).toFixed(1)} ms p90 ${pct(s, 0.9).toFixed(1)} ms | big p50 ${pct(b, 0.5).toFixed(1)} ms p90 ${pct(b, 0.9).toFixed(1)} ms | big/small p50 ${(pct(b, 0.5) / pct(s, 0.5)).toFixed(2)}`;
console.log(line('board (25 per column)', times.small, times.big));
console.log(line('deals.move', moves.small, moves.big));
const ratio = pct(times.big, 0.5) / pct(times.small, 0.5);
console.log(ratio <= 1.5 ? `board within 1.5× (${ratio.toFixed(2)})` : `board NOT within 1.5× (${ratio.toFixed(2)})`);
await crm.close();
await stopAll();
