// `npm run bench:soak`: sustained load (BENCH_SOAK_SECONDS, default 60) of REST invokes through the
// gateway — parties.list, half of them with a fresh Idempotency-Key — and the memory of each
// process before and after (RSS, V8 heap used after a full collection, so what is live), from the
// probe of shared/src/probe.ts; read again after 10 s of rest.
// Also prints throughput and latency per 10 s slice, to show whether either drifts over time.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { build } from '../scripts/build.ts';
import { startSystem } from '../scripts/system.ts';
import { startTestSystemIdentity } from './identity.ts';
import { describeFairShare } from './fair-share.ts';
import { mb, Probe, type ProbeWindow } from './probe.ts';

const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const slice = 10;

await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
const outDir = path.join(repoRoot, 'test-output', 'bench-soak');
const probeDir = path.join(outDir, 'probe');
rmSync(probeDir, { recursive: true, force: true });
mkdirSync(probeDir, { recursive: true });
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(outDir, 'mongo.log') }), startRedis({ dir: outDir })]);
const system = await startSystem({
  mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: 'soak', ports: 'free', logDir: path.join(outDir, 'logs'),
  env: { LOG_LEVEL: 'warn', CUADRA_PROBE_DIR: probeDir, CUADRA_PROBE_GC: '1', RATE_LIMIT_PER_CREDENTIAL: '100000000/60', RATE_LIMIT_PER_WORKSPACE: '100000000/60' },
});
try {
  const { apiKey } = await startTestSystemIdentity(mongo.url, redis.url, 'soak_gateway');
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${system.gatewayUrl}/v1/tools/parties.create:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Cliente ${i}`, kind: 'customer' }),
    });
    if (r.status !== 200) throw new Error(`seeding failed: ${r.status} ${await r.text()}`);
  }
  const processes = { gateway: system.gateway.child.pid!, crm: system.subgraphs.crm.child.pid! };
  const probes = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, new Probe(probeDir, name, pid)]));
  const cutAll = async () => Object.fromEntries(await Promise.all(Object.entries(probes).map(async ([name, p]) => [name, await p.cut()] as const))) as Record<string, ProbeWindow>;
  const url = `${system.gatewayUrl}/v1/tools/parties.list:invoke`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
  let counter = 0;
  const requests = [
    { method: 'POST' as const, headers, body: JSON.stringify({ limit: 8 }) },
    { method: 'POST' as const, headers, body: JSON.stringify({ limit: 8 }), setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `soak-${process.pid}-${counter++}` } }) },
  ];
  await autocannon({ url, connections, duration: 3, requests }); // warm-up
  const before = await cutAll();
  const rows: string[] = [];
  let total = 0;
  for (let t = 0; t < seconds; t += slice) {
    const r = await autocannon({ url, connections, duration: Math.min(slice, seconds - t), requests });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`soak: ${r.non2xx} non-2xx, ${r.errors} errors at ${t} s`);
    total += r.requests.total;
    rows.push(`  ${String(t).padStart(3)}–${String(t + slice).padEnd(3)} s  ${r.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(5)} ms`);
  }
  const after = await cutAll();
  await new Promise((r) => setTimeout(r, 10_000));
  const rested = await cutAll();
  console.log(describeFairShare(connections));
  console.log(`soak: ${seconds} s, ${connections} connections, ${total} REST invokes of parties.list (half with an Idempotency-Key)`);
  for (const row of rows) console.log(row);
  console.log('memory (before → after → after 10 s of rest; heap used after a full GC):');
  for (const name of Object.keys(processes)) {
    const [b, a, z] = [before[name], after[name], rested[name]];
    console.log(`  ${name.padEnd(7)} RSS ${mb(b.memory.rss)} → ${mb(a.memory.rss)} → ${mb(z.memory.rss)};  heap used ${mb(b.memory.heapUsed)} → ${mb(a.memory.heapUsed)} → ${mb(z.memory.heapUsed)};  CPU ${(a.cpu_us / total).toFixed(0)} µs/call`);
  }
} finally {
  await system.stop();
  await stopAll();
}
