// `npm run bench:soak`: sustained load (BENCH_SOAK_SECONDS, default 300) of REST invokes through the
// gateway — crm's parties.list (half of them with a fresh Idempotency-Key) and the agents service's
// ledger reads (the first page, a tool filter) in turn — and the memory of every service: resident
// size and V8 heap in use after a full collection (what is live), from the probe of
// shared/src/probe.ts, at every 10 s slice, and again after 10 s of rest. A service's heap is flat
// when its live heap at the end is at most BENCH_SOAK_FLAT_MB (default 5) above the first slice's;
// a service grew when its resident size at the end is more than BENCH_SOAK_GROWTH_MB (default 50,
// issue 33's bound) above where the warm-up left it. Either fails the bench. The probe counts no
// MongoDB commands here (CUADRA_PROBE_MONGO=0): the driver's command monitoring decodes every answer
// a second time, allocation production never does. CUADRA_PROBE_HEAP=<service> adds its allocation
// profile per slice (bench/heap-summary.ts). The services start with the heap bound every service starts with
// (scripts/system.ts SERVICE_NODE_OPTIONS); CUADRA_SERVICE_NODE_OPTIONS replaces it ('' = V8's defaults) and
// BENCH_SERVICE_NODE_OPTIONS (e.g. `--max-semi-space-size=16`) is given after it as every service's NODE_OPTIONS
// (not this process's), to measure other bounds;
// BENCH_SERVICE_ENV (e.g. `MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072`) adds those variables to every service's
// environment. BENCH_SOAK_NATIVE=1 prints where each service's resident memory is (bench/native-memory.ts: V8's young
// generation, glibc's arenas, other anonymous mappings) before, after and after the rest, then asks each service's
// malloc, through gdb, what it holds and to give back what is free (malloc_trim), and prints the RSS that remains.
// Also prints throughput and latency per slice, to show whether either drifts over time.
import path from 'node:path';
import autocannon from 'autocannon';
import { startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { SERVICE_NODE_OPTIONS, startSystem } from '../scripts/system.ts';
import { startTestSystemIdentity } from './identity.ts';
import { prepareBench } from './prepare.ts';
import { describeFairShare } from './fair-share.ts';
import { mb, Probe, type ProbeWindow } from './probe.ts';
import { mallocTrim, nativeBreakdown, type NativeBreakdown } from './native-memory.ts';

const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 300);
const flatMb = Number(process.env.BENCH_SOAK_FLAT_MB ?? 5);
const growthMb = Number(process.env.BENCH_SOAK_GROWTH_MB ?? 50);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const slice = 10;
const serviceNodeOptions = process.env.BENCH_SERVICE_NODE_OPTIONS ?? '';
const serviceEnv = Object.fromEntries((process.env.BENCH_SERVICE_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const native = process.env.BENCH_SOAK_NATIVE === '1';

const { outDir, freshDir: probeDir } = await prepareBench('bench-soak', 'probe');
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(outDir, 'mongo.log') }), startRedis({ dir: outDir })]);
const system = await startSystem({
  mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: 'soak', ports: 'free', logDir: path.join(outDir, 'logs'),
  env: { LOG_LEVEL: 'warn', CUADRA_PROBE_DIR: probeDir, CUADRA_PROBE_GC: '1', CUADRA_PROBE_MONGO: '0', RATE_LIMIT_PER_CREDENTIAL: '100000000/60', RATE_LIMIT_PER_WORKSPACE: '100000000/60', ...(serviceNodeOptions ? { NODE_OPTIONS: serviceNodeOptions } : {}), ...serviceEnv },
});
try {
  const { apiKey } = await startTestSystemIdentity(mongo.url, redis.url, 'soak_gateway');
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${system.gatewayUrl}/v1/tools/parties.create:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Cliente ${i}`, kind: 'customer' }),
    });
    if (r.status !== 200) throw new Error(`seeding failed: ${r.status} ${await r.text()}`);
  }
  const processes: Record<string, number> = { gateway: system.gateway.child.pid!, ...Object.fromEntries(Object.entries(system.subgraphs).map(([name, sg]) => [name, sg.child.pid!])) };
  const probes = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, new Probe(probeDir, name, pid)]));
  const cutAll = async () => Object.fromEntries(await Promise.all(Object.entries(probes).map(async ([name, p]) => [name, await p.cut()] as const))) as Record<string, ProbeWindow>;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
  let counter = 0;
  const invoke = (tool: string) => `/v1/tools/${tool}:invoke`;
  const requests = [
    { method: 'POST' as const, path: invoke('parties.list'), headers, body: JSON.stringify({ limit: 8 }) },
    { method: 'POST' as const, path: invoke('parties.list'), headers, body: JSON.stringify({ limit: 8 }), setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `soak-${process.pid}-${counter++}` } }) },
    { method: 'POST' as const, path: invoke('ledger.list'), headers, body: JSON.stringify({ limit: 50 }) },
    { method: 'POST' as const, path: invoke('ledger.list'), headers, body: JSON.stringify({ tool: 'parties.create', limit: 50 }) },
  ];
  const url = system.gatewayUrl;
  await autocannon({ url, connections, duration: 3, requests }); // warm-up
  const before = await cutAll();
  const breakdownAll = () => Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, nativeBreakdown(pid)])) as Record<string, NativeBreakdown | null>;
  const nativeBefore = native ? breakdownAll() : {};
  const rows: string[] = [];
  const heaps: Record<string, number[]> = Object.fromEntries(Object.keys(processes).map((name) => [name, []]));
  const cpuUs: Record<string, number> = Object.fromEntries(Object.keys(processes).map((name) => [name, 0]));
  let total = 0;
  let after = before;
  let nativeAfter: Record<string, NativeBreakdown | null> = {};
  for (let t = 0; t < seconds; t += slice) {
    const r = await autocannon({ url, connections, duration: Math.min(slice, seconds - t), requests });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`soak: ${r.non2xx} non-2xx, ${r.errors} errors at ${t} s`);
    total += r.requests.total;
    after = await cutAll();
    if (native && t + slice >= seconds) nativeAfter = breakdownAll();
    for (const name of Object.keys(processes)) {
      heaps[name].push(after[name].memory.heapUsed);
      cpuUs[name] += after[name].cpu_us;
    }
    rows.push(`  ${String(t).padStart(3)}–${String(t + slice).padEnd(3)} s  ${r.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(5)} ms   live heap MB: ${Object.keys(processes).map((name) => `${name} ${(after[name].memory.heapUsed / 1048576).toFixed(1)}`).join(', ')}`);
  }
  await new Promise((r) => setTimeout(r, 10_000));
  const rested = await cutAll();
  const nativeRested = native ? breakdownAll() : {};
  console.log(`soak: ${seconds} s, ${connections} connections, ${total} REST invokes in turn: parties.list, parties.list with an Idempotency-Key, ledger.list, ledger.list by tool`);
  console.log(describeFairShare(connections));
  console.log(`services' NODE_OPTIONS: ${[process.env.CUADRA_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS, serviceNodeOptions].filter(Boolean).join(' ') || '(none)'}; added environment: ${Object.entries(serviceEnv).map(([k, v]) => `${k}=${v}`).join(' ') || '(none)'}`);
  for (const row of rows) console.log(row);
  console.log(`memory (before → after → after 10 s of rest; heap used after a full GC, of the heap V8 committed; flat: the last slice's live heap at most ${flatMb} MB above the first's; grew: RSS after more than ${growthMb} MB above before):`);
  let grew = 0;
  for (const name of Object.keys(processes)) {
    const [b, a, z] = [before[name], after[name], rested[name]];
    const drift = (heaps[name].at(-1)! - heaps[name][0]) / 1048576;
    // Growth is what a leak looks like; a heap that ends lower than the first slice (warm-up's leftovers collected) is flat.
    const flat = drift <= flatMb;
    const growth = (a.memory.rss - b.memory.rss) / 1048576;
    if (!flat || growth > growthMb) grew++;
    console.log(`  ${name.padEnd(9)} RSS ${mb(b.memory.rss)} → ${mb(a.memory.rss)} → ${mb(z.memory.rss)} (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB${growth > growthMb ? ' GREW' : ''});  heap used ${mb(b.memory.heapUsed)} → ${mb(a.memory.heapUsed)} → ${mb(z.memory.heapUsed)} of ${mb(b.memory.heapTotal)} → ${mb(a.memory.heapTotal)} → ${mb(z.memory.heapTotal)};  external ${mb(b.memory.external)} → ${mb(a.memory.external)} → ${mb(z.memory.external)};  first → last slice ${drift >= 0 ? '+' : ''}${drift.toFixed(1)} MB ${flat ? 'flat' : 'NOT FLAT'};  CPU ${(cpuUs[name] / total).toFixed(0)} µs/call`);
  }
  if (native) {
    const m = (n: number) => (n / 1048576).toFixed(1);
    const line = (w: ProbeWindow, n: NativeBreakdown | null) => (n ? `RSS ${m(n.rss)} = young gen ${m(w.memory.newSpace ?? 0)} (heap ${m(w.memory.heapTotal)}) + brk ${m(n.brk)} + arenas ${m(n.arenas)} + other anon ${m(n.otherAnon)} + file ${m(n.file)}; lazy-free ${m(n.lazyFree)}; arrayBuffers ${m(w.memory.arrayBuffers ?? 0)}` : '—');
    console.log('where the memory is (MB; young gen and heap are V8\'s committed figures, inside "other anon"; before / after / after rest), then malloc_trim(0) in the process:');
    for (const [name, pid] of Object.entries(processes)) {
      console.log(`  ${name}`);
      console.log(`    before ${line(before[name], nativeBefore[name])}`);
      console.log(`    after  ${line(after[name], nativeAfter[name])}`);
      console.log(`    rested ${line(rested[name], nativeRested[name])}`);
      const t = await mallocTrim(pid, path.join(outDir, 'logs', `${name}.log`));
      console.log(t ? `    malloc holds ${t.mallocSystem === undefined ? '?' : m(t.mallocSystem)} MB from the system, ${t.mallocInUse === undefined ? '?' : m(t.mallocInUse)} in use; malloc_trim(0): RSS ${m(t.rssBefore)} → ${m(t.rssAfter)} (${m(t.rssAfter - t.rssBefore)})` : '    malloc_trim: gdb could not attach');
    }
  }
  if (grew > 0) process.exitCode = 1;
} finally {
  await system.stop();
  await stopAll();
}
