// `node bench/start.ts`: what starting the whole system costs — wall time until every service
// answers /healthz, and the CPU each of the six Node processes spent getting there (from /proc),
// for BENCH_STARTS (default 3) starts on one MongoDB-protocol server and Redis. The tests start a
// system per file, so this is most of `npm test`'s fixed cost. The first start fills Node's
// compile cache (.cache/node-compile) if it is empty (remove that folder to see a start without it).
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from '../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { startSystem } from '../scripts/system.ts';
import { processCpuUs } from './probe.ts';

const starts = Number(process.env.BENCH_STARTS ?? 3);
const dir = path.join(repoRoot, 'test-output', 'bench', 'start');
await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(dir, 'mongo.log') }), startRedis({ dir })]);
try {
  for (let i = 0; i < starts; i++) {
    const t0 = performance.now();
    const sys = await startSystem({ mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: `start${i}_${Date.now()}`, ports: 'free', logDir: path.join(dir, 'logs'), env: { LOG_LEVEL: 'warn' } });
    const wall = performance.now() - t0;
    const cpu = [['gateway', sys.gateway.child.pid!] as const, ...Object.entries(sys.subgraphs).map(([n, s]) => [n, s.child.pid!] as const)].map(([n, pid]) => [n, processCpuUs(pid) / 1000] as const);
    console.log(`start ${i + 1}: ${wall.toFixed(0)} ms until healthy; CPU ${cpu.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(', ')} ms; total ${cpu.reduce((a, [, ms]) => a + ms, 0).toFixed(0)} ms`);
    await sys.stop();
  }
} finally {
  await stopAll();
}
