// `npm run bench`: the cost of each layer on the invoke path, measured side by side in one run
// with autocannon against real servers (memory MongoDB-protocol server, Redis, six processes):
//   (a) POST /v1/tools/parties.list:invoke through the gateway (auth, rate limit, validation, forward)
//   (b) the crm tool mutation straight at the subgraph (assertion check, validation, the query)
//   (c) a bare express handler doing the same mongoose query
//   (d) the same mutation through the gateway's /graphql (query planner) — what (a) avoids
//   (e) (a) with a fresh Idempotency-Key on every request
//   (f) the crm tool mutation without GraphQL (POST /invoke: what the gateway's forwarder uses)
//   (g) (f) through a bare Node proxy (bench/bare-proxy.ts): the floor of one proxy hop here
//   (h) (a)'s call through a bare Node proxy that does by hand the gateway's per-call contract work
//       (bench/contract-proxy.ts): what that work costs without the gateway's code around it
//   (i) (h) without its two hashes (the key's SHA-256, the vouch's HMAC): what OpenSSL costs there
// Prints req/s, p50/p99 latency and the ratios (a/b, a/f, g/f, a/g, b/c, d/a, e/a…), and per call for the gateway and
// crm processes: CPU µs, MongoDB commands and Redis commands/round trips (shared/src/probe.ts).
// BENCH_COUNT_MONGO=0 leaves the driver's command monitoring off (it copies every command, a cost the
// bare handler (c) does not pay): the verdict figures; MongoDB commands then read 0.
// BENCH_VARIANTS=abe runs some only, in that order (a letter may repeat); BENCH_PROFILE=1 also writes one V8 CPU profile per variant and
// process under test-output/bench/probe/ (summarise with `node bench/profile-summary.ts <files>`).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { hashApiKey, signAssertion, ASSERTION_HEADER } from '../shared/src/credentials.ts';
import { describeFairShare } from './fair-share.ts';
import { freePort, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { startSystem } from '../scripts/system.ts';
import { startTestSystemIdentity } from './identity.ts';
import { prepareBench } from './prepare.ts';

import { MachineMeter, perCall, Probe, sum } from './probe.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
// BENCH_RATE=<req/s>: every variant paced at that rate (autocannon's overallRate) instead of as fast as it goes. A
// process's CPU per call falls as more calls arrive per turn of its event loop, so unpaced variants that reach
// different rates (on a shared machine, whatever the other processes leave them) are not compared at equal work;
// paced, they are (the throughput ratios then only say whether each kept the pace).
const pace = Number(process.env.BENCH_RATE ?? 0);
const input = { limit: 8 };

const { outDir, freshDir: probeDir } = await prepareBench('bench', 'probe');
const only = process.env.BENCH_VARIANTS;
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(outDir, 'mongo.log') }), startRedis({ dir: outDir })]);
const system = await startSystem({
  mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: 'bench', ports: 'free', logDir: path.join(outDir, 'logs'),
  env: { LOG_LEVEL: 'warn', CUADRA_PROBE_DIR: probeDir, CUADRA_PROBE_MONGO: process.env.BENCH_COUNT_MONGO === '0' ? '0' : '1', CUADRA_PROBE_PROFILE: process.env.BENCH_PROFILE === '1' ? '1' : '0', RATE_LIMIT_PER_CREDENTIAL: '100000000/60', RATE_LIMIT_PER_WORKSPACE: '100000000/60' },
});
/** A baseline server of this folder on a free port, once it prints READY. */
async function baseline(file: string, env: Record<string, string>, flags: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...flags, path.join(repoRoot, 'bench', file)], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('READY') && resolve()));
  return { child, port };
}
const { child: bare, port: barePort } = await baseline('bare-server.ts', { MONGO_URL: mongo.url, MONGO_DB: 'bench_crm' });
// BENCH_PROFILE=1: the proxy's whole life profiled too (written when it exits), to set the gateway's profile against the floor's.
const proxyFlags = process.env.BENCH_PROFILE === '1' ? ['--cpu-prof', '--cpu-prof-interval=500', `--cpu-prof-dir=${probeDir}`, '--cpu-prof-name=proxy.cpuprofile'] : [];
const { child: proxy, port: proxyPort } = await baseline('bare-proxy.ts', { TARGET_URL: system.subgraphs.crm.url, FORWARD_HEADER: ASSERTION_HEADER }, proxyFlags);

let contract: ChildProcess | undefined;
let contractNoCrypto: ChildProcess | undefined;
try {
  const { workspace, apiKey, principal } = await startTestSystemIdentity(mongo.url, redis.url, 'bench_gateway');
  const contractProxy = await baseline('contract-proxy.ts', {
    TARGET_URL: system.subgraphs.crm.url, KEY_DIGEST: hashApiKey(apiKey), PRINCIPAL: JSON.stringify(principal), ASSERTION_KEY: system.keys.privateKey, CUADRA_SEAL_KEY: system.sealKey,
  });
  contract = contractProxy.child;
  // (i) only when asked for: a second contract proxy, without its hashes.
  const noCrypto = only?.includes('i') ? await baseline('contract-proxy.ts', {
    TARGET_URL: system.subgraphs.crm.url, KEY_DIGEST: hashApiKey(apiKey), KEY_TEXT: apiKey, CONTRACT_NO_CRYPTO: '1', PRINCIPAL: JSON.stringify(principal), ASSERTION_KEY: system.keys.privateKey, CUADRA_SEAL_KEY: system.sealKey,
  }) : undefined;
  contractNoCrypto = noCrypto?.child;
  // 200 parties in the workspace; every variant reads the newest 8 and the count.
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${system.gatewayUrl}/v1/tools/parties.create:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Cliente ${i}`, kind: 'customer' }),
    });
    if (r.status !== 200) throw new Error(`seeding failed: ${r.status} ${await r.text()}`);
  }
  const assertion = signAssertion(principal, system.keys.privateKey);
  const mutation = JSON.stringify({ query: 'mutation($i: JSON!) { invokeCrmTool(tool: "parties.list", input: $i) }', variables: { i: input } });
  const variants = [
    { key: 'a', label: 'gateway REST invoke', url: `${system.gatewayUrl}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input) },
    { key: 'b', label: 'subgraph tool mutation', url: `${system.subgraphs.crm.url}/graphql`, headers: { [ASSERTION_HEADER]: assertion }, body: mutation },
    { key: 'c', label: 'bare express + mongoose', url: `http://127.0.0.1:${barePort}/parties`, headers: { 'x-workspace': workspace }, body: JSON.stringify(input) },
    { key: 'd', label: 'gateway /graphql (planner)', url: `${system.gatewayUrl}/graphql`, headers: { authorization: `Bearer ${apiKey}` }, body: mutation },
    { key: 'f', label: 'subgraph POST /invoke', url: `${system.subgraphs.crm.url}/invoke`, headers: { [ASSERTION_HEADER]: assertion }, body: JSON.stringify({ tool: 'parties.list', input }) },
    { key: 'g', label: 'bare Node proxy -> (f)', url: `http://127.0.0.1:${proxyPort}/invoke`, headers: { [ASSERTION_HEADER]: assertion }, body: JSON.stringify({ tool: 'parties.list', input }) },
    { key: 'h', label: 'contract proxy -> (f)', url: `http://127.0.0.1:${contractProxy.port}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input) },
    ...(noCrypto ? [{ key: 'i', label: 'contract proxy, no hashes', url: `http://127.0.0.1:${noCrypto.port}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input) }] : []),
    { key: 'e', label: 'gateway REST + Idempotency-Key', url: `${system.gatewayUrl}/v1/tools/parties.list:invoke`, headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify(input), idempotent: true },
  ];
  const results: Record<string, { rps: number; p50: number; p99: number; gatewayCpu: number; crmCpu: number }> = {};
  const probes = { gateway: new Probe(probeDir, 'gateway', system.gateway.child.pid!), crm: new Probe(probeDir, 'crm', system.subgraphs.crm.child.pid!) };
  const layers: string[] = [];
  // Every process on the path, read from /proc: where the machine's CPU went per call. When the
  // cores are busy, throughput is 2 cores ÷ the sum of this row, so this is what bounds it.
  const meter = new MachineMeter({
    gateway: system.gateway.child.pid!, crm: system.subgraphs.crm.child.pid!, mongo: mongo.pid, redis: redis.pid, 'load generator': process.pid, bare: bare.pid!, proxy: proxy.pid!, contract: contract.pid!, ...(contractNoCrypto ? { 'no hashes': contractNoCrypto.pid! } : {}),
  });
  const machineLines: string[] = [];
  // What each process burns with no calls at all (sweeps, timers), to take out of the per-call figures:
  // on a loaded machine few calls are done, and a fixed background would look like a per-call cost.
  await Promise.all([probes.gateway.cut(), probes.crm.cut()]);
  await new Promise((r) => setTimeout(r, 4000));
  const [idleGw, idleCrm] = await Promise.all([probes.gateway.cut(), probes.crm.cut()]);
  const idleRate = { gateway: idleGw.cpu_us / idleGw.wall_ms, crm: idleCrm.cpu_us / idleCrm.wall_ms };
  console.log(describeFairShare(connections));
  console.log(`idle CPU: gateway ${(idleRate.gateway * 1000).toFixed(0)} µs/s, crm ${(idleRate.crm * 1000).toFixed(0)} µs/s (taken out of the per-call CPU below)`);
  // Every path is exercised once before anything is measured: the MongoDB-protocol server is a
  // JVM, and its first seconds on a new path (the ledger, the idempotency records) cost it 3–4× the
  // CPU per command — which would be charged to whichever variant happened to run first.
  const selected = only ? [...only].map((k) => variants.find((x) => x.key === k)!).filter(Boolean) : variants;
  // A service assertion lives 60 s: the variants straight at the subgraph get one signed just before they run.
  const freshAssertion = (v: (typeof variants)[number]) => {
    if (ASSERTION_HEADER in v.headers) (v.headers as unknown as Record<string, string>)[ASSERTION_HEADER] = signAssertion(principal, system.keys.privateKey);
  };
  let keys = 0;
  // (e) sends a fresh key per request: each is a first use (insert, run, store the answer).
  const load = (v: (typeof variants)[number], duration: number) => autocannon({
    url: v.url, method: 'POST', headers: { 'content-type': 'application/json', ...v.headers }, body: v.body, connections, duration, ...(pace > 0 ? { overallRate: pace } : {}),
    requests: v.idempotent ? [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `bench-${process.pid}-${keys++}` } }) }] : undefined,
  });
  for (const v of new Set(selected)) {
    freshAssertion(v);
    await load(v, 3);
  }
  // BENCH_VARIANTS also sets the order, and may repeat one (`afa`: is (a) slower first or always?).
  for (const v of selected) {
    freshAssertion(v);
    // Check the answer first: a bench of errors measures nothing.
    const probe = await fetch(v.url, { method: 'POST', headers: { 'content-type': 'application/json', ...v.headers }, body: v.body });
    const probeText = await probe.text();
    if (probe.status !== 200 || !probeText.includes('Cliente 199')) throw new Error(`${v.label} answered ${probe.status}: ${probeText.slice(0, 200)}`);
    await load(v, 2); // warm-up of this window
    await Promise.all([probes.gateway.cut(), probes.crm.cut()]); // ends the warm-up's window
    meter.begin();
    const r = await load(v, seconds);
    const machine = meter.end(r.requests.total);
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${v.label}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    const [gw, crm] = await Promise.all([probes.gateway.cut(), probes.crm.cut()]);
    // CPU per request is the cost that does not depend on how the 2 cores are shared out.
    const calls = r.requests.total;
    const busy = { gateway: Math.max(0, gw.cpu_us - idleRate.gateway * gw.wall_ms), crm: Math.max(0, crm.cpu_us - idleRate.crm * crm.wall_ms) };
    const gatewayCpu = busy.gateway / calls;
    const crmCpu = busy.crm / calls;
    for (const [name, w] of [['gateway', gw], ['crm', crm]] as const) {
      if (busy[name] / calls < 20) continue; // not on this variant's path
      layers.push(`(${v.key}) ${name.padEnd(7)} CPU ${(busy[name] / calls).toFixed(0).padStart(4)} µs/call; MongoDB ${(sum(w.mongo) / calls).toFixed(2)}/call (${perCall(w.mongo, calls)}); Redis ${(w.redisRoundTrips / calls).toFixed(2)} round trips/call, ${(sum(w.redisCommands) / calls).toFixed(2)} commands (${perCall(w.redisCommands, calls)})${w.profile ? `; profile ${path.relative(repoRoot, w.profile)}` : ''}`);
    }
    machineLines.push(`(${v.key}) cores ${(machine.busyShare * 100).toFixed(0)} % busy, ${(machine.stealShare * 100).toFixed(0)} % stolen by the host; CPU µs/call: ${Object.entries(machine.perCall).filter(([, us]) => us >= 5).map(([k, us]) => `${k} ${us.toFixed(0)}`).join(', ')}; total ${sum(machine.perCall).toFixed(0)}; of which on the main thread: ${Object.entries(machine.mainPerCall).filter(([k]) => machine.perCall[k] >= 5).map(([k, us]) => `${k} ${us.toFixed(0)}`).join(', ')}`);
    results[v.key] = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, gatewayCpu, crmCpu };
    console.log(`(${v.key}) ${v.label.padEnd(28)} ${r.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   CPU/request: gateway ${gatewayCpu.toFixed(0).padStart(4)} µs, crm ${crmCpu.toFixed(0).padStart(4)} µs`);
  }
  console.log('per call, by process (probe windows over the measured run only):');
  for (const line of layers) console.log(`  ${line}`);
  console.log('per call, the whole machine (/proc; "other" is every process not named: the other subgraphs, the system):');
  for (const line of machineLines) console.log(`  ${line}`);
  const ratio = (x: string, y: string) => `${x}/${y}: throughput ${(results[x].rps / results[y].rps).toFixed(2)}×, p50 latency ${(results[x].p50 / Math.max(results[y].p50, 0.5)).toFixed(2)}×`;
  const have = (...k: string[]) => k.every((x) => results[x]);
  console.log(`ratios (${connections} connections, ${seconds} s each, 200 parties, newest 8 + count):`);
  if (have('a', 'b')) console.log(`  ${ratio('a', 'b')}; p50 added by the gateway ${(results.a.p50 - results.b.p50).toFixed(1)} ms`);
  if (have('a', 'f')) console.log(`  ${ratio('a', 'f')}; p50 added by the gateway ${(results.a.p50 - results.f.p50).toFixed(1)} ms  (against the route the gateway uses)`);
  if (have('g', 'f')) console.log(`  ${ratio('g', 'f')}; p50 added by a bare Node proxy hop ${(results.g.p50 - results.f.p50).toFixed(1)} ms  (the floor of any proxy hop on this machine)`);
  if (have('a', 'g')) console.log(`  ${ratio('a', 'g')}  (the gateway's own work: credential, limiter, validation, headers)`);
  if (have('a', 'h')) console.log(`  ${ratio('a', 'h')}  (the gateway against its per-call contract work done by hand in plain Node)`);
  if (have('i', 'h')) console.log(`  ${ratio('i', 'h')}  (the contract proxy without its two hashes)`);
  if (have('h', 'g')) console.log(`  ${ratio('h', 'g')}  (the contract's per-call work in plain Node against the bare hop)`);
  if (have('b', 'c')) console.log(`  ${ratio('b', 'c')}`);
  if (have('f', 'c')) console.log(`  ${ratio('f', 'c')}`);
  if (have('d', 'a')) console.log(`  ${ratio('d', 'a')}; gateway CPU per request d/a: ${(results.d.gatewayCpu / results.a.gatewayCpu).toFixed(2)}×`);
  if (have('a', 'c')) console.log(`  ${ratio('a', 'c')}  (the whole pipeline — credential, limiter, validation, policy, ledger — against the bare query)`);
  if (have('e', 'a')) console.log(`  ${ratio('e', 'a')}  (an Idempotency-Key on every call)`);
  for (const [k, x] of Object.entries(results)) if (x.p99 > 3 * x.p50) console.log(`  (${k}) p99 ${x.p99} ms is over 3× its p50 ${x.p50} ms`);
} finally {
  bare.kill('SIGTERM');
  proxy.kill('SIGTERM');
  contract?.kill('SIGTERM');
  contractNoCrypto?.kill('SIGTERM');
  const proxyGone = proxy.exitCode !== null || proxy.signalCode !== null ? Promise.resolve() : new Promise((resolve) => proxy.once('exit', resolve));
  await system.stop();
  await proxyGone;
  await stopAll();
}
