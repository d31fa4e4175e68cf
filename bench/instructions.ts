// `node bench/instructions.ts`: the gateway's own work per forwarded call counted in instructions, a figure the
// other sessions' load does not move (issue 33, "The hop"; hop14). CPU time per call moves ±50 % on this shared
// 2-core machine and hardware counters are not available here (`perf stat -e instructions` reads nothing), so each
// process under test runs under valgrind's callgrind, which counts the user-space instructions every thread of
// the process executes (V8's JIT code included: valgrind translates the generated code like any other).
//
// One system is started as bench/invoke.ts starts it (memory MongoDB-protocol server, Redis, six processes, 200
// parties); beside it, under callgrind, one more gateway per entry in BENCH_GATEWAYS (the system's gateway
// settings, read from its /proc environ, on a port of its own: a copy of the tree before a change runs beside the
// tree after it, on the same subgraphs, in the same run), the bare proxy (g) and the contract proxy (h). Each is
// driven alone, in turn: warmed with BENCH_WARM calls, then for BENCH_ROUNDS rounds a window of N calls, one of 2N
// and an idle window, each between `callgrind_control -z` (zero) and `-d` (dump). Per call = (I(2N) − I(N)) / N:
// what a window costs whatever its length (the zero and dump themselves) drops out. The idle window gives the
// process's background (timers, the MongoDB driver's monitoring, its threads) per second; it is reported, and
// taken out of the "net" figure (a window under valgrind lasts ~50× its real length, so the background per call
// read inside it is ~50× the real one).
//
// Not counted: the kernel's work (syscalls: the sockets' reads and writes, epoll) — the same per call for the
// gateway and the proxies, two sockets each (the gateway's 0.13 Redis round trips per call aside) — and time
// spent waiting. So the ratio gateway / proxy here is of user-space work; µs are given at the proxy's native
// instructions per µs when BENCH_NATIVE_PROXY_US is set (its /proc CPU per call from bench/invoke.ts).
//
// After them, BENCH_NATIVE_CALLS (default 20,000) calls at the system's own gateway, natively, and the scavenges and full
// collections it made (every service with --trace-gc, preloaded by bench/trace-gc.mjs; BENCH_TRACE_GC=0: off).
// Env: BENCH_CALLS (N, default 1000), BENCH_WARM (default 3000), BENCH_ROUNDS (default 2), BENCH_CONNECTIONS
// (default 16), BENCH_GATEWAYS=`name=<path of gateway/src/index.ts>,…` (default `gateway=<this tree's>`),
// BENCH_PROXIES=gh (which of the bare (g) and contract (h) proxies to count; '' for none), BENCH_IDLE_TRIM=0 (the
// gateways without their idle trim: it runs a full collection when the RSS has grown, and under valgrind the RSS
// holds valgrind's own translations, so it fires where it would not natively). Run it under the lock:
//   flock /tmp/cuadra-cpu.lock env BENCH_GATEWAYS=after=gateway/src/index.ts,before=/tmp/x/gateway/src/index.ts \
//     ./node_modules/.bin/node bench/instructions.ts
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { hashApiKey, signAssertion, ASSERTION_HEADER } from '../shared/src/credentials.ts';
import { freePort, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { SERVICE_NODE_OPTIONS, startSystem } from '../scripts/system.ts';
import { startTestSystemIdentity } from './identity.ts';
import { prepareBench } from './prepare.ts';

const N = Number(process.env.BENCH_CALLS ?? 1000);
const warm = Number(process.env.BENCH_WARM ?? 3000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const proxiesWanted = process.env.BENCH_PROXIES ?? 'gh';
const gatewaysWanted = (process.env.BENCH_GATEWAYS ?? `gateway=${path.join(repoRoot, 'gateway', 'src', 'index.ts')}`)
  .split(',').filter(Boolean).map((s) => { const [name, entry] = s.split('='); return { name, entry: path.resolve(entry) }; });
const input = { limit: 8 };

const { outDir, freshDir: cgDir } = await prepareBench('bench', 'callgrind');
// BENCH_TRACE_GC (default on; 0 = off): every service (and each gateway under callgrind) with --trace-gc, its collections in its log — how
// many scavenges and full collections a window of calls makes, natively (BENCH_NATIVE_CALLS calls at the system's own
// gateway) and under valgrind, and why (V8 prints the reason).
const traceGc = process.env.BENCH_TRACE_GC !== '0';
if (traceGc) process.env.CUADRA_SERVICE_NODE_OPTIONS = `${SERVICE_NODE_OPTIONS} --import=${path.join(repoRoot, 'bench', 'trace-gc.mjs')}`;
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(outDir, 'mongo.log') }), startRedis({ dir: outDir })]);
const system = await startSystem({
  mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: 'bench', ports: 'free', logDir: path.join(outDir, 'logs'),
  env: { LOG_LEVEL: 'warn', CUADRA_PROBE_MONGO: '0', RATE_LIMIT_PER_CREDENTIAL: '100000000/60', RATE_LIMIT_PER_WORKSPACE: '100000000/60' },
});

interface Counted { name: string; host?: string; child: ChildProcess; port: number; url: string; headers: Record<string, string>; body: string; out: string }
const children: ChildProcess[] = [];
/** Starts `args` (a node entry and its flags) under callgrind, instrumentation off until the warm-up. */
function underCallgrind(name: string, args: string[], env: Record<string, string | undefined>, cwd = repoRoot): ChildProcess {
  const out = path.join(cgDir, `${name}.out`);
  const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let log = '';
  child.stdout!.on('data', (d: Buffer) => { log += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  child.once('exit', (code) => {
    writeFileSync(path.join(cgDir, `${name}.log`), log);
    if (code) process.stderr.write(`${name} exited ${code}:\n${log.slice(-2000)}\n`);
  });
  (child as ChildProcess & { logText: () => string }).logText = () => log;
  return child;
}
async function untilAnswers(url: string, child: ChildProcess, name: string): Promise<void> {
  const until = Date.now() + 600_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${name} exited before answering`);
    try { if ((await fetch(url)).status < 500) return; } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${name} did not answer in 10 minutes`);
}
/**
 * Tells one process's callgrind `args` (vgdb's command). Valgrind names its vgdb pipes after the guest's
 * HOST variable, which the gateway's settings set (its listening address): vgdb is given the same, or it
 * looks for other pipes, prints an error and callgrind_control still says OK.
 */
const control = (t: Counted, ...args: string[]) => {
  const said = execFileSync('vgdb', [`--pid=${t.child.pid}`, ...args], { stdio: 'pipe', env: { ...process.env, HOST: t.host ?? '' } });
  return said;
};
/** Zeroes the counters, runs `what`, dumps: the instructions of that window and its wall time. */
/** The collections a process under callgrind printed so far (--trace-gc: BENCH_TRACE_GC=1): scavenges, full ones and their lines. */
function collections(t: Counted): { minor: number; major: string[] } {
  const lines = (t.child as ChildProcess & { logText?: () => string }).logText?.().split('\n') ?? [];
  const major = lines.filter((l) => /Mark-Compact|Mark-Sweep/.test(l));
  return { minor: lines.filter((l) => /Scavenge|Minor Mark/.test(l)).length, major };
}
let lastGc = '';
async function window(t: Counted, what: () => Promise<void>): Promise<{ ir: number; ms: number }> {
  const gcBefore = collections(t);
  const before = new Set(readdirSync(cgDir));
  control(t, 'zero');
  const t0 = performance.now();
  await what();
  const ms = performance.now() - t0;
  const said = control(t, 'dump').toString();
  // The dump is written when valgrind's scheduler takes the command: waited for (its totals line ends the file).
  let dumped: string[] = [];
  let m: RegExpExecArray | null = null;
  for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
    dumped = readdirSync(cgDir).filter((f) => f.startsWith(`${t.name}.out.`) && !before.has(f));
    if (dumped.length === 1 && (m = /^(?:summary|totals): (\d+)/m.exec(readFileSync(path.join(cgDir, dumped[0]), 'utf8')))) break;
  }
  if (dumped.length !== 1) throw new Error(`${t.name}: ${dumped.length} new dumps (${readdirSync(cgDir).join(' ')}); callgrind_control said: ${said}`);
  if (!m) throw new Error(`${t.name}: no total in ${dumped[0]}`);
  const gcAfter = collections(t);
  const majors = gcAfter.major.slice(gcBefore.major.length);
  lastGc = traceGc ? ` [${gcAfter.minor - gcBefore.minor} scavenges, ${majors.length} full${majors.length ? `: ${majors.map((l) => (/\)\s*([^()]*)$/.exec(l.trim())?.[1] ?? l.trim()).slice(-60)).join(' | ')}` : ''}]` : '';
  if (traceGc) console.log(`  ${t.name}: ${(Number(m[1]) / 1e6).toFixed(1)} M in ${(ms / 1000).toFixed(1)} s${lastGc}`);
  return { ir: Number(m[1]), ms };
}
async function calls(t: Counted, amount: number): Promise<void> {
  // A service assertion lives 60 s: the proxies' callers send one signed just before each batch.
  if (ASSERTION_HEADER in t.headers) t.headers[ASSERTION_HEADER] = signAssertion(principalOf!, system.keys.privateKey);
  const r = await autocannon({ url: t.url, method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: t.body, connections, amount, timeout: 120 });
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
}

let principalOf: Parameters<typeof signAssertion>[0] | undefined;
try {
  const { apiKey, principal } = await startTestSystemIdentity(mongo.url, redis.url, 'bench_gateway');
  principalOf = principal;
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${system.gatewayUrl}/v1/tools/parties.create:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Cliente ${i}`, kind: 'customer' }),
    });
    if (r.status !== 200) throw new Error(`seeding failed: ${r.status} ${await r.text()}`);
  }
  // The system gateway's own settings (NODE_OPTIONS included), as startAnotherGateway would lay them.
  const gatewayEnv = Object.fromEntries(readFileSync(`/proc/${system.gateway.child.pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => { const i = kv.indexOf('='); return [kv.slice(0, i), kv.slice(i + 1)]; }));
  const targets: Counted[] = [];
  for (const g of gatewaysWanted) {
    // A copy of the tree (git archive) has no build output: it is given this tree's composed supergraph.
    const generated = path.resolve(g.entry, '..', '..', 'generated');
    if (!existsSync(path.join(generated, 'supergraph.graphql'))) cpSync(path.join(repoRoot, 'gateway', 'generated'), generated, { recursive: true });
    const port = await freePort();
    const child = underCallgrind(g.name, [g.entry], { ...gatewayEnv, PORT: String(port), CUADRA_INSTANCE: `cg-${g.name}`, CUADRA_PROBE_DIR: undefined, ...(process.env.BENCH_IDLE_TRIM === '0' ? { CUADRA_IDLE_TRIM: '0' } : {}) }, path.resolve(g.entry, '..', '..', '..'));
    targets.push({ name: g.name, host: gatewayEnv.HOST, child, port, url: `http://127.0.0.1:${port}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input), out: '' });
  }
  const crm = system.subgraphs.crm.url;
  if (proxiesWanted.includes('g')) {
    const port = await freePort();
    const child = underCallgrind('proxy', [path.join(repoRoot, 'bench', 'bare-proxy.ts')], { ...process.env, HOST: '127.0.0.1', TARGET_URL: crm, FORWARD_HEADER: ASSERTION_HEADER, PORT: String(port) });
    targets.push({ name: 'proxy', host: '127.0.0.1', child, port, url: `http://127.0.0.1:${port}/invoke`, headers: { [ASSERTION_HEADER]: '' }, body: JSON.stringify({ tool: 'parties.list', input }), out: '' });
  }
  if (proxiesWanted.includes('h')) {
    const port = await freePort();
    const child = underCallgrind('contract', [path.join(repoRoot, 'bench', 'contract-proxy.ts')], {
      ...process.env, HOST: '127.0.0.1', TARGET_URL: crm, KEY_DIGEST: hashApiKey(apiKey), PRINCIPAL: JSON.stringify(principal), ASSERTION_KEY: system.keys.privateKey, CUADRA_SEAL_KEY: system.sealKey, PORT: String(port),
    });
    targets.push({ name: 'contract', host: '127.0.0.1', child, port, url: `http://127.0.0.1:${port}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input), out: '' });
  }
  for (const t of targets) await untilAnswers(t.name === 'proxy' || t.name === 'contract' ? `http://127.0.0.1:${t.port}/` : `http://127.0.0.1:${t.port}/healthz`, t.child, t.name);
  const rows: string[] = [];
  const perCallOf: Record<string, number[]> = {};
  for (const t of targets) {
    if (ASSERTION_HEADER in t.headers) t.headers[ASSERTION_HEADER] = signAssertion(principal, system.keys.privateKey);
    const probe = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: t.body });
    const text = await probe.text();
    if (probe.status !== 200 || !text.includes('Cliente 199')) throw new Error(`${t.name} answered ${probe.status}: ${text.slice(0, 200)}`);
    control(t, 'instrumentation', 'on');
    const w0 = performance.now();
    await calls(t, warm);
    const warmS = (performance.now() - w0) / 1000;
    for (let r = 0; r < rounds; r++) {
      const one = await window(t, () => calls(t, N));
      const two = await window(t, () => calls(t, 2 * N));
      const idle = await window(t, () => new Promise((res) => setTimeout(res, Math.round(one.ms))));
      const idleRate = idle.ir / idle.ms; // instructions per ms of wall under valgrind
      const gross = (two.ir - one.ir) / N;
      const net = (two.ir - idleRate * two.ms - (one.ir - idleRate * one.ms)) / N;
      (perCallOf[t.name] ??= []).push(net);
      rows.push(`| ${t.name} | ${r + 1} | ${(one.ir / 1e6).toFixed(1)} M in ${(one.ms / 1000).toFixed(1)} s | ${(two.ir / 1e6).toFixed(1)} M in ${(two.ms / 1000).toFixed(1)} s | ${(idle.ir / 1e6).toFixed(1)} M in ${(idle.ms / 1000).toFixed(1)} s | ${(gross / 1000).toFixed(1)} k | ${(net / 1000).toFixed(1)} k |`);
      console.log(rows.at(-1));
    }
    console.log(`  (${t.name}: warm-up ${warm} calls in ${warmS.toFixed(1)} s)`);
  }
  const nativeCalls = Number(process.env.BENCH_NATIVE_CALLS ?? 20000);
  if (nativeCalls > 0) {
    // The system's own gateway, natively: the same calls, its collections counted from its log (--trace-gc).
    const logFile = path.join(outDir, 'logs', 'gateway.log');
    const gcLines = () => readFileSync(logFile, 'utf8').split('\n').filter((l) => /\b(Scavenge|Mark-Compact|Mark-Sweep|Minor Mark)/.test(l));
    const native: Counted = { name: 'native', child: system.gateway.child, port: 0, url: `${system.gatewayUrl}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input), out: '' };
    await calls(native, 3000);
    const before = gcLines().length;
    const t0 = performance.now();
    await calls(native, nativeCalls);
    const ms = performance.now() - t0;
    const seen = gcLines().slice(before);
    const major = seen.filter((l) => /Mark-Compact|Mark-Sweep/.test(l));
    console.log(`native gateway: ${nativeCalls} calls in ${(ms / 1000).toFixed(1)} s: ${seen.length - major.length} scavenges, ${major.length} full collections${major.length ? `; e.g. ${major[0].trim()}` : ''}`);
  }
  console.log(`\ninstructions per call (callgrind, user space, every thread; N = ${N}, ${connections} connections; net = idle background taken out):`);
  console.log('| process | round | window N | window 2N | idle window | per call, gross | per call, net |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const proxy = perCallOf.proxy ? median(perCallOf.proxy) : undefined;
  const nativeProxyUs = Number(process.env.BENCH_NATIVE_PROXY_US ?? 0);
  for (const [name, xs] of Object.entries(perCallOf)) {
    const m = median(xs);
    let line = `${name}: median ${(m / 1000).toFixed(1)} k instructions per call (${xs.map((x) => (x / 1000).toFixed(1)).join(', ')})`;
    if (proxy !== undefined && name !== 'proxy') {
      line += `; ${(m / proxy).toFixed(2)}× the bare proxy, own ${((m - proxy) / 1000).toFixed(1)} k`;
      if (nativeProxyUs > 0) line += ` ≈ ${(((m - proxy) / proxy) * nativeProxyUs).toFixed(0)} µs at the proxy's ${nativeProxyUs} µs per call`;
    }
    console.log(line);
  }
  console.log(`callgrind dumps (callgrind_annotate <file>): ${path.relative(repoRoot, cgDir)}`);
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => { const t = setTimeout(() => c.kill('SIGKILL'), 20_000); c.once('exit', () => { clearTimeout(t); r(undefined); }); })));
  await system.stop();
  await stopAll();
}
