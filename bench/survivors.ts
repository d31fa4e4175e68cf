// `node bench/survivors.ts`: what outlives a forwarded call in the gateway (issue 33, "The hop"; hop15). One system
// is started as bench/instructions.ts starts it (memory MongoDB-protocol server, Redis, six processes, 200 parties),
// every service with `--heapsnapshot-signal=SIGUSR2` (the probe, which also takes SIGUSR2, is off: no
// CUADRA_PROBE_DIR). The gateway is warmed with BENCH_WARM REST fast-pass calls (parties.list, one credential,
// BENCH_CONNECTIONS connections), then heap snapshots are taken (V8 collects all garbage before each):
//   idle      — after the warm-up, idle 3 s;
//   loaded    — BENCH_LOAD_AT_MS into a run of BENCH_SURVIVOR_CALLS calls (what lives while calls are under way);
//   after     — 1 s after that run ended;
//   later     — BENCH_LATER_S (default 35) seconds after that (past 30 s reuse windows).
// Each is summarised by constructor / node name (count, self bytes), and the differences from `idle` are printed:
// what grows with calls made (a leak), what is alive only under load beyond the in-flight calls (objects that live a
// while: promoted, then freed), what is kept for a time after. Snapshots stay in test-output/bench/snapshots for
// bench/snapshot-diff.ts (retainers). Run it under the lock:
//   flock /tmp/cuadra-cpu.lock ./node_modules/.bin/node bench/survivors.ts
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { SERVICE_NODE_OPTIONS, startSystem } from '../scripts/system.ts';
import { startTestSystemIdentity } from './identity.ts';
import { prepareBench } from './prepare.ts';
import { diff, fresh, parse, summarise } from './snapshot-diff.ts';

const warm = Number(process.env.BENCH_WARM ?? 3000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const runCalls = Number(process.env.BENCH_SURVIVOR_CALLS ?? 20000);
const loadAt = Number(process.env.BENCH_LOAD_AT_MS ?? 8000);
const laterS = Number(process.env.BENCH_LATER_S ?? 35);
const input = { limit: 8 };

const { outDir, freshDir: snapDir } = await prepareBench('bench', 'snapshots');
// BENCH_V8_FLAGS (e.g. `--trace-gc-nvp --trace-pretenuring`): V8 flags NODE_OPTIONS refuses, set at start by a
// preload in every service (as bench/trace-gc.mjs does), their output in each service's log.
const v8Flags = process.env.BENCH_V8_FLAGS ?? '';
let preload = '';
if (v8Flags) {
  preload = path.join(snapDir, 'v8-flags.mjs');
  writeFileSync(preload, `import v8 from 'node:v8';\nv8.setFlagsFromString(${JSON.stringify(v8Flags)});\n`);
}
// BENCH_PROMOTED=1 (snapshots off): the gateway's probe takes a sampling heap profile of the clean window without
// what scavenges collected (CUADRA_PROBE_HEAP_MINOR=0): where what survives a scavenge was allocated
// (snapshots/gateway.<n>.heapprofile; `node bench/heap-summary.ts <file> <calls>`). The probe takes SIGUSR2 then.
const promoted = process.env.BENCH_PROMOTED === '1';
if (promoted) Object.assign(process.env, { BENCH_SNAPSHOTS: '0', CUADRA_PROBE_DIR: snapDir, CUADRA_PROBE_HEAP: 'gateway', CUADRA_PROBE_HEAP_MINOR: '0' });
process.env.CUADRA_SERVICE_NODE_OPTIONS = `${process.env.CUADRA_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS}${promoted ? '' : ` --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapDir}`}${preload ? ` --import=${preload}` : ''}`;
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(outDir, 'mongo.log') }), startRedis({ dir: outDir })]);
const system = await startSystem({
  mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: 'bench', ports: 'free', logDir: path.join(outDir, 'logs'),
  env: { LOG_LEVEL: 'warn', CUADRA_PROBE_MONGO: '0', RATE_LIMIT_PER_CREDENTIAL: '100000000/60', RATE_LIMIT_PER_WORKSPACE: '100000000/60', ...(process.env.BENCH_IDLE_TRIM === '0' ? { CUADRA_IDLE_TRIM: '0' } : {}) },
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pid = system.gateway.child.pid!;

/** SIGUSR2 to the gateway; waits for its snapshot file to stop growing; returns its path. */
async function snapshot(label: string): Promise<string> {
  const before = new Set(readdirSync(snapDir));
  process.kill(pid, 'SIGUSR2');
  let file = '';
  let size = -1;
  for (let stable = 0; stable < 4; await sleep(500)) {
    const fresh = readdirSync(snapDir).filter((f) => !before.has(f) && f.includes(`.${pid}.`));
    if (fresh.length !== 1) continue;
    file = path.join(snapDir, fresh[0]);
    const s = statSync(file).size;
    stable = s === size && s > 0 ? stable + 1 : 0;
    size = s;
  }
  console.log(`snapshot ${label}: ${path.basename(file)} (${(size / 1048576).toFixed(1)} MB)`);
  return file;
}

let stopped = false;
try {
  const { apiKey } = await startTestSystemIdentity(mongo.url, redis.url, 'bench_gateway');
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${system.gatewayUrl}/v1/tools/parties.create:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Cliente ${i}`, kind: 'customer' }),
    });
    if (r.status !== 200) throw new Error(`seeding failed: ${r.status} ${await r.text()}`);
  }
  const url = `${system.gatewayUrl}/v1/tools/parties.list:invoke`;
  const calls = async (amount: number) => {
    const r = await autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input), connections, amount, timeout: 120 });
    if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
    return r;
  };
  await calls(warm);
  await sleep(3000);
  const snapshots = process.env.BENCH_SNAPSHOTS !== '0';
  const files: Record<string, string> = {};
  if (snapshots) {
  files.idle = await snapshot('idle');
  const run = calls(runCalls);
  await sleep(loadAt);
  files.loaded = await snapshot('loaded');
  const r = await run;
  console.log(`run: ${runCalls} calls, ${r.requests.average.toFixed(0)} calls/s average`);
  await sleep(1000);
  files.after = await snapshot('after');
  await sleep(laterS * 1000);
  files.later = await snapshot('later');
  }
  // A clean window (no snapshot in it): the collections BENCH_SURVIVOR_CALLS calls make, from the gateway's log
  // (V8's --trace-gc lines, when BENCH_V8_FLAGS has --trace-gc), kept in snapshots/window-gc.log.
  const logFile = path.join(outDir, 'logs', 'gateway.log');
  const from = statSync(logFile).size;
  if (promoted) { process.kill(pid, 'SIGUSR2'); await sleep(2000); } // closes the warm-up's window, opens the clean one's
  const w0 = performance.now();
  await calls(runCalls);
  const ws = (performance.now() - w0) / 1000;
  if (promoted) { process.kill(pid, 'SIGUSR2'); await sleep(5000); console.log(`promoted-allocation profiles: ${readdirSync(snapDir).filter((f) => f.endsWith('.heapprofile')).join(', ')}`); }
  await sleep(500);
  const slice = readFileSync(logFile).subarray(from).toString('utf8');
  writeFileSync(path.join(snapDir, 'window-gc.log'), slice);
  const lines = slice.split('\n');
  // --trace-gc's lines, or --trace-gc-nvp's (which replace them: gc=s a scavenge, gc=mc a full collection; their
  // allocated= and promoted= summed).
  const gcLine = /^\[\d+:0x[0-9a-f]+(?::\d+)?\]/;
  const major = lines.filter((l) => gcLine.test(l) && /\b(Mark-Compact|Mark-Sweep)\b| gc=mc /.test(l)).length;
  const minor = lines.filter((l) => gcLine.test(l) && /\b(Scavenge|Minor Mark)| gc=s /.test(l)).length;
  const sum = (field: string) => lines.filter((l) => / gc=s /.test(l)).reduce((n, l) => n + Number(new RegExp(` ${field}=(\\d+)`).exec(l)?.[1] ?? 0), 0);
  if (minor && sum('allocated')) console.log(`scavenges (nvp): ${(sum('allocated') / runCalls / 1024).toFixed(1)} KB allocated per call, ${(sum('promoted') / runCalls / 1024).toFixed(1)} KB promoted per call`);
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  console.log(`clean window: ${runCalls} calls in ${ws.toFixed(1)} s: ${minor} scavenges, ${major} full collections (--trace-gc lines; snapshots/window-gc.log); gateway RSS ${(Number(rss) / 1024).toFixed(0)} MB, peak ${(Number(hwm) / 1024).toFixed(0)} MB`);
  await system.stop();
  await stopAll();
  stopped = true;
  if (snapshots) {
  const idleParsed = parse(files.idle);
  const idle = summarise(idleParsed);
  for (const label of ['loaded', 'after', 'later']) {
    const p = parse(files[label]);
    diff(idle, summarise(p), `${label} − idle, by name`);
    console.log(`${label}: objects not in idle (same snapshot ids), by name, and who holds them:`);
    fresh(idleParsed, p);
  }
  }
} finally {
  if (!stopped) {
    await system.stop();
    await stopAll();
  }
}
