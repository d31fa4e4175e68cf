// `node bench/start.ts`: what starting the whole system costs — wall time until every service
// answers /healthz, and the CPU each of the Node processes spent getting there (from /proc),
// for BENCH_STARTS (default 3) starts on one MongoDB-protocol server and Redis. The tests start a
// system per file, so this is most of `npm test`'s fixed cost. The first start fills Node's
// compile cache (.cache/node-compile) if it is empty (remove that folder to see a start without it).
//
// `BENCH_COMPARE=<another checkout>`: BENCH_STARTS pairs of starts, alternating that checkout's
// services and this one's on the same servers (the other checkout built: `npm run build` there, and
// its node_modules the same), then the median CPU per service of each side — a before/after measured
// side by side, so the machine's load falls on both alike.
//
// `BENCH_BUNDLE=1`: the same, this checkout's services from their sources against the same services
// bundled by bench/bundle.ts (one rolldown build of all eight, into test-output/bench/start/bundle).
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from '../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { startSystem } from '../scripts/system.ts';
import { bundleServices } from './bundle.ts';
import { processCpuUs } from './probe.ts';

const starts = Number(process.env.BENCH_STARTS ?? 3);
const compare = process.env.BENCH_COMPARE ? path.resolve(process.env.BENCH_COMPARE) : undefined;
const dir = path.join(repoRoot, 'test-output', 'bench', 'start');
const entryIn = (root: string) => (service: string) => (service === 'gateway' ? path.join(root, 'gateway', 'src', 'index.ts') : path.join(root, 'subgraphs', service, 'src', 'index.ts'));
const bundled = path.join(dir, 'bundle');
const sides: { name: string; root: string; entry: (service: string) => string }[] = process.env.BENCH_BUNDLE === '1'
  ? [{ name: 'other', root: 'sources', entry: entryIn(repoRoot) }, { name: 'this', root: 'bundle', entry: (service) => path.join(bundled, `${service}.mjs`) }]
  : compare ? [{ name: 'other', root: compare, entry: entryIn(compare) }, { name: 'this', root: repoRoot, entry: entryIn(repoRoot) }] : [{ name: 'this', root: repoRoot, entry: entryIn(repoRoot) }];
const byService = new Map<string, number[]>(); // `${side} ${service}` → CPU ms of each start
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
if (process.env.BENCH_BUNDLE === '1') {
  rmSync(bundled, { recursive: true, force: true });
  const cpu = process.cpuUsage();
  const made = await bundleServices(bundled);
  const used = process.cpuUsage(cpu);
  console.log(`bundled every service: ${made.files} files of ${made.modules} modules in ${made.ms.toFixed(0)} ms, ${((used.user + used.system) / 1e6).toFixed(1)} CPU-s`);
}
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(dir, 'mongo.log') }), startRedis({ dir })]);
try {
  for (let i = 0; i < starts; i++) {
    for (const side of sides) {
      const t0 = performance.now();
      const sys = await startSystem({ mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: `start${i}_${side.name}_${Date.now()}`, ports: 'free', logDir: path.join(dir, 'logs'), env: { LOG_LEVEL: 'warn' }, serviceEntry: side.entry });
      const wall = performance.now() - t0;
      const cpu = [['gateway', sys.gateway.child.pid!] as const, ...Object.entries(sys.subgraphs).map(([n, s]) => [n, s.child.pid!] as const)].map(([n, pid]) => [n, processCpuUs(pid) / 1000] as const);
      const total = cpu.reduce((a, [, ms]) => a + ms, 0);
      for (const [n, ms] of [...cpu, ['total', total] as const]) byService.set(`${side.name} ${n}`, [...(byService.get(`${side.name} ${n}`) ?? []), ms]);
      console.log(`start ${i + 1}${sides.length > 1 ? ` (${side.name}: ${side.root})` : ''}: ${wall.toFixed(0)} ms until healthy; load ${loadavg()[0].toFixed(1)}; CPU ${cpu.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(', ')} ms; total ${total.toFixed(0)} ms`);
      await sys.stop();
    }
  }
  if (sides.length > 1) {
    console.log('median CPU ms per start (other → this):');
    for (const service of ['gateway', ...Object.keys(Object.fromEntries([...byService.keys()].filter((k) => k.startsWith('this ')).map((k) => [k.slice(5), 1]))).filter((s) => s !== 'gateway')]) {
      const a = median(byService.get(`other ${service}`) ?? [NaN]);
      const b = median(byService.get(`this ${service}`) ?? [NaN]);
      console.log(`  ${service.padEnd(10)} ${a.toFixed(0).padStart(6)} → ${b.toFixed(0).padStart(6)} (${(b - a >= 0 ? '+' : '') + (b - a).toFixed(0)}, ${((100 * (b - a)) / a).toFixed(0)} %)`);
    }
  }
} finally {
  await stopAll();
}
