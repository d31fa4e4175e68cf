// `node bench/render.ts`: how long dashboards.render takes for a 20-block dashboard, end to end
// over REST (gateway → composed graph → invoices and crm subgraphs, concurrently), on the whole
// system started as `npm test` starts it (memory backend, throwaway Redis, six processes).
// Data: the seeded receivables of test/helpers/canvas.ts (3 customers, 6 posted invoices, 1 payment).
// BENCH_RUNS (default 30) timed renders after 5 warm-up renders. Prints, per render, the CPU and the
// MongoDB commands of the gateway, invoices and crm processes (shared/src/probe.ts), and the whole
// machine's CPU per render by process from /proc (the JVM and Redis too); BENCH_PROFILE=1
// also writes their V8 CPU profiles under test-output/bench/render/probe/ (bench/profile-summary.ts).
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from '../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { seedReceivables } from '../test/helpers/canvas.ts';
import { startTestSystem } from '../test/helpers/system.ts';
import { MachineMeter, perCall, Probe } from './probe.ts';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const runDir = path.join(repoRoot, 'test-output', 'bench', 'render');

/** Twenty leaf blocks, every one reading data (metrics through invoicesMetric, records through invoicesRecords/crmRecords). */
function twentyBlocks(): unknown[] {
  const metric = (q: Record<string, unknown>, type = 'chart') => ({ type, title: q.metric, query: q });
  return [
    { type: 'stats', items: [{ label: 'Revenue', query: { metric: 'revenue', compare: 'previous_period' } }, { label: 'AR', query: { metric: 'ar_outstanding' } }, { label: 'Open', query: { metric: 'invoices_status' } }] },
    metric({ metric: 'revenue', interval: 'day' }), metric({ metric: 'revenue', interval: 'week', compare: 'previous_year' }), metric({ metric: 'revenue', interval: 'month', days: 366 }),
    metric({ metric: 'ar_outstanding', interval: 'week' }), metric({ metric: 'ar_aging' }), metric({ metric: 'invoices_status' }),
    metric({ metric: 'top_customers', limit: 10 }, 'table'), metric({ metric: 'top_customers', days: 30 }, 'table'), metric({ metric: 'revenue', days: 30 }, 'table'),
    { type: 'records', records: { source: 'invoices', limit: 20 } }, { type: 'records', records: { source: 'invoices', status: 'posted' } },
    { type: 'records', records: { source: 'payments' } }, { type: 'records', records: { source: 'items' } }, { type: 'records', records: { source: 'parties' } },
    { type: 'records', records: { source: 'parties', search: 'andina' } }, { type: 'detail', records: { source: 'invoices' } },
    { type: 'records', records: { source: 'quotes' } }, { type: 'agenda', agenda: { sources: ['receivables', 'recurring'] } }, { type: 'event', event: { source: 'receivables' } },
  ];
}

await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(runDir, 'mongo.log') }), startRedis({ dir: runDir })]);
process.env.MONGO_URL = mongo.url;
process.env.REDIS_URL = redis.url;
process.env.CUADRA_TEST_OUTPUT = path.join(repoRoot, 'test-output');
const probeDir = path.join(runDir, 'probe');
rmSync(probeDir, { recursive: true, force: true });
mkdirSync(probeDir, { recursive: true });
const sys = await startTestSystem('benchrender', { CUADRA_PROBE_DIR: probeDir, CUADRA_PROBE_PROFILE: process.env.BENCH_PROFILE === '1' ? '1' : '0' });
const probes = ['gateway', 'invoices', 'crm'].map((n) => new Probe(probeDir, n, (n === 'gateway' ? sys.gateway : sys.subgraphs[n]).pid));
// Every process a render runs through, read from /proc: with the 2 cores shared, the sum bounds the render.
const meter = new MachineMeter({
  gateway: sys.gateway.pid, invoices: sys.subgraphs.invoices.pid, crm: sys.subgraphs.crm.pid, mongo: mongo.pid, redis: redis.pid, 'bench client': process.pid,
});
try {
  const ws = await sys.workspace('Bench SAS');
  await seedReceivables(sys, ws.api_key);
  const blocks = twentyBlocks();
  const id = (await sys.invoke('dashboards.save', { title: 'Twenty', blocks }, ws.api_key)).body.output.dashboard.id;
  const timed: number[] = [];
  const server: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    if (i === 5) {
      await Promise.all(probes.map((p) => p.cut())); // the timed window starts
      meter.begin();
    }
    const t0 = performance.now();
    const r = await sys.invoke('dashboards.render', { id }, ws.api_key);
    const ms = performance.now() - t0;
    if (r.status !== 200) throw new Error(`render → ${r.status} ${JSON.stringify(r.body)}`);
    const failed = (r.body.output.blocks as { error?: unknown }[]).filter((b) => b.error);
    if (failed.length) throw new Error(`blocks failed: ${JSON.stringify(failed)}`);
    if (i >= 5) {
      timed.push(ms);
      server.push(r.body.output.render_ms);
    }
  }
  const machine = meter.end(runs);
  const windows = await Promise.all(probes.map((p) => p.cut()));
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  console.log(`dashboards.render, ${blocks.length} leaf blocks (stats of 3 cards, 9 metric charts/tables, 8 records/detail, agenda of 2 lanes, event: 23 graph reads), ${runs} runs`);
  console.log(`  over REST:     p50 ${pct(timed, 50).toFixed(1)} ms  p95 ${pct(timed, 95).toFixed(1)} ms  max ${Math.max(...timed).toFixed(1)} ms`);
  console.log(`  in the gateway (render_ms): p50 ${pct(server, 50)} ms  p95 ${pct(server, 95)} ms`);
  console.log(`  the whole machine (/proc): cores ${(machine.busyShare * 100).toFixed(0)} % busy, ${(machine.stealShare * 100).toFixed(0)} % stolen by the host; CPU ms/render: ${Object.entries(machine.perCall).map(([k, us]) => `${k} ${(us / 1000).toFixed(1)}`).join(', ')}`);
  for (const w of windows) {
    console.log(`  ${w.name.padEnd(8)} CPU ${(w.cpu_us / runs / 1000).toFixed(1).padStart(5)} ms/render; MongoDB ${perCall(w.mongo, runs)}${w.profile ? `; profile ${path.relative(repoRoot, w.profile)}` : ''}`);
  }
} finally {
  await sys.stop();
  await stopAll();
}
