/**
 * The long-lived parts of one `npm test` run, started once and shared by the test files
 * (issue 33): **one whole system per vitest worker** (the five subgraphs and the gateway, six
 * processes), **the Peppol validator** (one JVM answering every document) and **one Chromium**
 * (each page-test file opens its own context in it).
 *
 * `scripts/test.ts` starts the pool before vitest and names it to the tests in `CUADRA_TEST_POOL`
 * (a loopback URL with a random path: only the processes given that variable can use it). Each
 * part starts on first use, so a run that needs none of them pays for none. The parts are children
 * of the `npm test` process: they are stopped when it ends, whatever the test files did.
 *
 * A worker's system is handed to one file at a time (vitest runs a worker's files one after the
 * other): before each hand-over the pool checks that every process is alive and the gateway
 * answers `/healthz` 200, and replaces a system that fails the check rather than reuse it.
 * Test files keep to their own workspaces in it (test/helpers/system.ts).
 *
 * A file that needs a system of its own (it kills, restarts or adds processes, or runs other
 * settings) is **lent** one (`exclusive`): its kills, restarts and added gateways go through the
 * pool, and when it lets go the pool puts the system right in the background (killed subgraphs
 * started again, added gateways stopped) and keeps it for the next file asking for the same
 * settings — a start is ~12 CPU-seconds, and the run is CPU-bound.
 *
 * A system no file is using is **frozen** (every process SIGSTOPped) and thawed (SIGCONT) when it is
 * handed out again: a worker's shared system while the worker runs a file with a lent one (or none),
 * a lent system while it waits for the next file with its settings. An idle system is not free: its
 * heartbeats, sweeps and pulls took 0.10–0.16 of a core across its eight processes, and the
 * MongoDB-protocol server answering them 0.03–0.07 more (measured, docs/measurements.md), while a run
 * keeps one or two systems idle through most of its system files. `CUADRA_TEST_POOL_FREEZE=0` keeps
 * them running.
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import type { BrowserServer } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../shared/src/pdf.ts';
import { startPeppolValidator, type PeppolValidatorProcess } from './peppol-validator.ts';
import { startSystem, type RunningSystem } from './system.ts';

/** The address book of a shared system, as a test file receives it. */
export interface SharedSystemInfo {
  gatewayUrl: string;
  /** Database names are `<dbPrefix>_<service>`. */
  dbPrefix: string;
  gateway: { name: string; url: string; port: number; pid: number };
  subgraphs: Record<string, { name: string; url: string; port: number; pid: number }>;
  keys: { privateKey: string; publicKey: string };
  ledgerKeys: { privateKey: string; publicKey: string };
  /** The services' key pair (peer reads, agents' run assertions). */
  serviceKeys: { privateKey: string; publicKey: string };
  /** `CUADRA_SEAL_KEY` of every service. */
  sealKey: string;
  /**
   * The loopback address (127.1.x.y) this file's connections leave from: limits keyed by the
   * client's address (sign-up, sign-in, client registration) then count each file apart, as they
   * would count separate machines.
   */
  sourceAddress: string;
}

/** One timed step of the run, for the summary `npm test` prints at the end. */
export interface PoolTiming {
  kind: 'shared system' | 'own system' | 'own system, lent again' | 'Peppol validator' | 'Chromium' | 'systems stopped' | 'systems thawed' | 'thaw' | 'system replaced';
  /** The worker (shared systems) or the test file (own systems) it was for. */
  label: string;
  /** How long it took; for `systems stopped`, when (since the pool started). */
  ms: number;
}

/** Options for {@link startTestPool}. */
export interface TestPoolOptions {
  /** The repository whose code the shared systems run; a test helper from another tree gets no shared system. */
  repoRoot: string;
  mongoUrl: string;
  redisUrl: string;
  /** Environment for every service of a shared system (SMTP_URL, LOG_LEVEL, …), on top of this process's. */
  env: Record<string, string>;
  /** Where each shared system's service logs go (`<logDir>/<db prefix>/<service>.log`). */
  logDir: string;
  /** The Peppol validator jar (scripts/peppol-validator.ts builds it). */
  peppolJar: string;
  /** Debian's Chromium (INFRA.md); never a downloaded browser. */
  chromium: string;
  /** The file each service of a system runs; the product's by default (see `SystemOptions.serviceEntry`). */
  serviceEntry?: (service: string) => string;
  /** Whether a system no file is using is frozen until it is handed out again (default: unless `CUADRA_TEST_POOL_FREEZE=0`). */
  freezeIdle?: boolean;
}

/** The running pool. */
export interface TestPool {
  /** `CUADRA_TEST_POOL` for the test processes. */
  readonly url: string;
  /** What was started and how long each took, in the order the steps ended. */
  timings(): PoolTiming[];
  /** Stops every part it started. */
  stop(): Promise<void>;
}

/** Released systems kept waiting for a file with their settings: one for each of vitest's two workers. */
const SPARES_PER_SETTINGS = 2;

/**
 * The settings a shared system runs with, beyond each service's production defaults.
 *
 * `FAIR_SHARE_CONTENDED_SLOTS` at the uncontended share (4): in production a workspace's share
 * narrows to one call at a time while another workspace called in the last second, and files
 * sharing a system follow one another within that second — the race tests (ten posts of the last
 * unit, ten bookings of one slot…) would then run one call after another and prove nothing. The
 * narrowing itself is proven where it is the subject (`shared/test/fair-share.test.ts`,
 * `subgraphs/crm/test/fair-share.test.ts`) and measured by `bench/scale.ts`.
 *
 * `CUADRA_EMBEDDED_THREADS` 1 (2 by default): a test run keeps both cores busy with its two
 * workers, and llama.cpp's second thread then mostly waits for a core (measured: the embedded
 * model's run 1.7× the CPU-seconds with two threads on the loaded machine, and no sooner done).
 */
export const SHARED_SYSTEM_ENV: Readonly<Record<string, string>> = { LOG_LEVEL: 'warn', FAIR_SHARE_CONTENDED_SLOTS: '4', CUADRA_EMBEDDED_THREADS: '1' };

interface Pooled {
  system: RunningSystem;
  dbPrefix: string;
}

/** A system lent to one file at a time, by the settings it runs with. */
interface Exclusive {
  key: string;
  pooled: Pooled;
  /** Gateways the borrowing file added, stopped when it lets go. */
  addedGateways: ChildProcess[];
  /** Whether the system came back as it was lent (its last borrower's processes put right). */
  restored: Promise<boolean>;
}

/** A span as the pool's OTLP receiver kept it: its trace, name and attributes (values unwrapped). */
export interface ExportedSpan {
  traceId: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** The part of an OTLP/HTTP JSON trace export the receiver reads. */
interface OtlpResourceSpans {
  scopeSpans?: { spans?: { traceId: string; name: string; attributes?: { key: string; value?: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean } }[] }[] }[];
}

/** A system of a file's own as the file receives it: the address book, and the lease to control its processes. */
export interface ExclusiveSystemInfo extends SharedSystemInfo {
  lease: string;
}

/** Starts the pool's HTTP endpoint; nothing else starts until it is asked for. */
export async function startTestPool(opts: TestPoolOptions): Promise<TestPool> {
  const token = randomBytes(16).toString('hex');
  const created = performance.now();
  const timings: PoolTiming[] = [];
  // By worker (VITEST_POOL_ID): the system that worker's files share.
  const byWorker = new Map<string, Promise<Pooled>>();
  const everyStart: Promise<Pooled>[] = [];
  let sourceAddresses = 0;
  let stopping = false;
  let validator: Promise<PeppolValidatorProcess> | undefined;
  /** The spans the systems exported to the pool's OTLP receiver, by trace id. */
  const spans = new Map<string, ExportedSpan[]>();
  let browser: Promise<BrowserServer> | undefined;

  const timed = async <T>(kind: PoolTiming['kind'], label: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    timings.push({ kind, label, ms: performance.now() - started });
    return result;
  };

  const launch = (label: string, kind: 'shared system' | 'own system' = 'shared system', env: Record<string, string> = {}): Promise<Pooled> => {
    if (stopping) return Promise.reject(new Error('the test pool is stopping'));
    const dbPrefix = `t_${kind === 'shared system' ? 'shared' : 'own'}_${randomBytes(3).toString('hex')}`;
    const started = timed(kind, label, async () => ({
      dbPrefix,
      system: await startSystem({
        mongoUrl: opts.mongoUrl, redisUrl: opts.redisUrl, dbPrefix, ports: 'free', logDir: path.join(opts.logDir, dbPrefix), serviceEntry: opts.serviceEntry,
        env: { ...opts.env, ...SHARED_SYSTEM_ENV, ...env },
      }),
    }));
    everyStart.push(started);
    return started;
  };

  /** Every process alive and the gateway healthy: the system can be handed to the next file. */
  const healthyNow = async ({ system }: Pooled): Promise<boolean> => {
    const processes = [system.gateway, ...Object.values(system.subgraphs)];
    if (processes.some((p) => p.child.exitCode !== null || p.child.signalCode !== null)) return false;
    try {
      const res = await fetch(`${system.gatewayUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  };
  /**
   * {@link healthyNow}; for a system just thawed, asked again for a few seconds: its timers all fire
   * at once as it resumes, and one that was waiting on the database when it froze (a heartbeat) may
   * find its wait over and mark the server down until its next heartbeat finds it (~1 s).
   */
  const healthy = async (pooled: Pooled, thawed = false): Promise<boolean> => {
    for (let attempt = 0; ; attempt++) {
      if (await healthyNow(pooled)) return true;
      const alive = [pooled.system.gateway, ...Object.values(pooled.system.subgraphs)].every((p) => p.child.exitCode === null && p.child.signalCode === null);
      if (!thawed || !alive || attempt >= 10) return false;
      await new Promise((r) => setTimeout(r, 300));
    }
  };

  // Systems no file is using, their processes stopped (SIGSTOP) until handed out again.
  const freezeIdle = opts.freezeIdle ?? process.env.CUADRA_TEST_POOL_FREEZE !== '0';
  const frozen = new Set<RunningSystem>();
  let thaws = 0;
  const processesOf = (system: RunningSystem) => [system.gateway, ...Object.values(system.subgraphs)].map((p) => p.child).filter((c) => c.exitCode === null && c.signalCode === null);
  const freeze = ({ system }: Pooled): void => {
    if (!freezeIdle || frozen.has(system)) return;
    for (const child of processesOf(system)) child.kill('SIGSTOP');
    frozen.add(system);
  };
  /** Resumes a frozen system; answers whether it was frozen. */
  const thaw = ({ system }: Pooled): boolean => {
    if (!frozen.delete(system)) return false;
    for (const child of processesOf(system)) child.kill('SIGCONT');
    thaws += 1;
    return true;
  };
  /** Stops a system, thawed first: a stopped process holds a SIGTERM until it resumes. */
  const stopPooled = async (pooled: Pooled): Promise<void> => {
    thaw(pooled);
    await pooled.system.stop();
  };

  const handOver = async (worker: string): Promise<Pooled> => {
    const current = byWorker.get(worker);
    if (current) {
      const pooled = await current.catch(() => undefined);
      if (pooled) {
        // Timed: a thaw's wait for /healthz, and a system replaced (a whole start) are what a hand-over costs.
        const started = performance.now();
        const thawed = thaw(pooled);
        const ok = await healthy(pooled, thawed);
        if (thawed) timings.push({ kind: 'thaw', label: `worker ${worker}`, ms: performance.now() - started });
        if (ok) return pooled;
        timings.push({ kind: 'system replaced', label: `worker ${worker}${thawed ? ', after a thaw' : ''}`, ms: performance.now() - started });
        // A system that crashed or cannot answer is not handed on: the next file gets a new one.
        await stopPooled(pooled).catch(() => undefined);
      }
    }
    const next = launch(`worker ${worker}`);
    byWorker.set(worker, next);
    return next;
  };
  // One hand-over at a time per worker, so two questions at once never start two systems.
  const handOvers = new Map<string, Promise<unknown>>();
  const systemFor = (worker: string): Promise<Pooled> => {
    const answer = (handOvers.get(worker) ?? Promise.resolve()).then(() => handOver(worker));
    handOvers.set(worker, answer.catch(() => undefined));
    return answer;
  };
  /** The worker's file is done with its shared system (or took a lent one instead): frozen until its next file asks. */
  const letGo = (worker: string): Promise<void> => {
    const done = (handOvers.get(worker) ?? Promise.resolve()).then(async () => {
      const pooled = await byWorker.get(worker)?.catch(() => undefined);
      if (pooled) freeze(pooled);
    });
    handOvers.set(worker, done.catch(() => undefined));
    return done;
  };

  // Systems of a file's own (it kills, restarts or adds processes, or runs other settings): lent to
  // one file at a time and, when it lets go, put right (killed subgraphs started again, added
  // gateways stopped) and kept for the next file that asks for the same settings — when the file
  // says others will (its settings are the ones most such files share); otherwise stopped.
  const lent = new Map<string, Exclusive>();
  const idle: Exclusive[] = [];
  let leases = 0;
  const settingsKey = (env: Record<string, string>) => JSON.stringify(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1)));
  const lentSystem = (lease: string): Exclusive => {
    const found = lent.get(lease);
    if (!found) throw new Error(`no system is lent under ${lease}`);
    return found;
  };
  /** Puts a system back as it was handed out; `false` when it cannot be (a process will not come up). */
  const restore = async (own: Exclusive): Promise<boolean> => {
    const { system } = own.pooled;
    try {
      await Promise.all(own.addedGateways.splice(0).map(async (g) => {
        if (g.exitCode !== null || g.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => g.once('exit', () => resolve()));
        g.kill('SIGTERM');
        await exited;
      }));
      for (const [name, p] of Object.entries(system.subgraphs)) if (p.child.exitCode !== null || p.child.signalCode !== null) await system.restartSubgraph(name);
      return await healthy(own.pooled);
    } catch {
      return false;
    }
  };
  const endpointOf = (p: { name: string; url: string; port: number; child: { pid?: number } }) => ({ name: p.name, url: p.url, port: p.port, pid: p.child.pid ?? 0 });
  const infoOf = ({ system, dbPrefix }: Pooled): SharedSystemInfo => {
    sourceAddresses += 1;
    return {
      gatewayUrl: system.gatewayUrl,
      dbPrefix,
      gateway: endpointOf(system.gateway),
      subgraphs: Object.fromEntries(Object.entries(system.subgraphs).map(([name, p]) => [name, endpointOf(p)])),
      keys: system.keys,
      ledgerKeys: system.ledgerKeys,
      serviceKeys: system.serviceKeys,
      sealKey: system.sealKey,
      // 127.1.0.2, 127.1.0.3, …: every one on the loopback interface, none the servers' 127.0.0.1.
      sourceAddress: `127.1.${Math.floor(sourceAddresses / 250) % 250}.${(sourceAddresses % 250) + 1}`,
    };
  };

  const handlers: Record<string, (body: any) => Promise<unknown>> = {
    async system(body: { worker: string; root: string }) {
      if (path.resolve(body.root) !== path.resolve(opts.repoRoot)) return { refused: `this run's shared systems run the code of ${opts.repoRoot}` };
      return infoOf(await systemFor(String(body.worker)));
    },
    async exclusive(body: { root: string; env: Record<string, string>; file: string; worker?: string }): Promise<ExclusiveSystemInfo | { refused: string }> {
      if (path.resolve(body.root) !== path.resolve(opts.repoRoot)) return { refused: `this run's systems run the code of ${opts.repoRoot}` };
      // The worker's shared system waits, frozen, while its file runs on the lent one.
      if (body.worker !== undefined) await letGo(String(body.worker));
      const key = settingsKey(body.env);
      let own: Exclusive | undefined;
      for (let i = idle.findIndex((o) => o.key === key); i >= 0; i = idle.findIndex((o) => o.key === key)) {
        const [candidate] = idle.splice(i, 1);
        const started = performance.now();
        const restored = await candidate.restored;
        const thawedAt = performance.now();
        const thawed = restored && thaw(candidate.pooled);
        const ok = restored && (await healthy(candidate.pooled, thawed));
        if (thawed) timings.push({ kind: 'thaw', label: body.file, ms: performance.now() - thawedAt });
        if (ok) {
          timings.push({ kind: 'own system, lent again', label: body.file, ms: performance.now() - started });
          own = candidate;
          break;
        }
        timings.push({ kind: 'system replaced', label: `${body.file} (lent)${thawed ? ', after a thaw' : ''}`, ms: performance.now() - started });
        await stopPooled(candidate.pooled).catch(() => undefined);
      }
      own ??= { key, pooled: await launch(body.file, 'own system', body.env), addedGateways: [], restored: Promise.resolve(true) };
      const lease = `lease_${++leases}`;
      lent.set(lease, own);
      return { ...infoOf(own.pooled), lease };
    },
    async 'exclusive/kill'(body: { lease: string; name: string }) {
      await lentSystem(body.lease).pooled.system.killSubgraph(body.name);
      return {};
    },
    async 'exclusive/restart'(body: { lease: string; name: string }) {
      const { system } = lentSystem(body.lease).pooled;
      await system.restartSubgraph(body.name);
      return endpointOf(system.subgraphs[body.name]);
    },
    async 'exclusive/another-gateway'(body: { lease: string; env?: Record<string, string> }) {
      const own = lentSystem(body.lease);
      const gateway = await own.pooled.system.startAnotherGateway(body.env);
      own.addedGateways.push(gateway.child);
      return endpointOf(gateway);
    },
    async 'exclusive/release'(body: { lease: string; keep?: boolean }) {
      const own = lentSystem(body.lease);
      lent.delete(body.lease);
      // Settings no other file asks for, or a spare for each worker already waiting: stopped (in the
      // background), not kept idle beside the busy ones.
      if (!body.keep || idle.filter((o) => o.key === own.key).length >= SPARES_PER_SETTINGS) {
        void stopPooled(own.pooled).catch(() => undefined);
        return {};
      }
      // Put right in the background, then frozen until the next file with these settings asks: that
      // file waits for it, this one does not.
      own.restored = restore(own).then((ok) => {
        if (ok) freeze(own.pooled);
        return ok;
      });
      idle.push(own);
      return {};
    },
    // vitest's main process says so (scripts/test-reporter.ts) when every system test file has
    // ended: the module tests that fill the rest of the run use no system, and an idle system is not
    // free (~0.1 of a core each: heartbeats, sweeps, pulls). Stopped in the background; a late ask
    // would start a system again.
    async 'systems/done'() {
      const idleSystems = [...byWorker.values(), ...idle.splice(0).map((o) => o.restored.then(() => o.pooled, () => o.pooled))];
      byWorker.clear();
      timings.push({ kind: 'systems stopped', label: `${idleSystems.length} idle after the last system test file`, ms: performance.now() - created });
      if (freezeIdle) timings.push({ kind: 'systems thawed', label: `${thaws} hand-overs of a frozen system`, ms: performance.now() - created });
      void Promise.allSettled(idleSystems).then((all) => Promise.all(all.map((s) => (s.status === 'fulfilled' ? stopPooled(s.value).catch(() => undefined) : undefined))));
      return { stopped: idleSystems.length };
    },
    // A file's shared system let go (test/helpers/system.ts, `stop()`): frozen until the worker's next file asks.
    async 'system/release'(body: { worker: string }) {
      await letGo(String(body.worker));
      return {};
    },
    // An OTLP/HTTP (JSON) trace receiver for the lent systems (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` in
    // test/helpers/system.ts's OWN_SYSTEM_SETTINGS): its URL is fixed for the run, so it can be one of
    // the settings the lent files share, and a file reads back only the traces of its own runs.
    async 'otlp/v1/traces'(body: { resourceSpans?: OtlpResourceSpans[] }) {
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const sp of ss.spans ?? []) {
        const attributes: Record<string, unknown> = {};
        for (const a of sp.attributes ?? []) attributes[a.key] = a.value?.stringValue ?? (a.value?.intValue !== undefined ? Number(a.value.intValue) : a.value?.doubleValue ?? a.value?.boolValue);
        const trace = spans.get(sp.traceId) ?? [];
        trace.push({ traceId: sp.traceId, name: sp.name, attributes });
        spans.set(sp.traceId, trace);
      }
      return {};
    },
    async 'otlp/spans'(body: { traceId: string }): Promise<ExportedSpan[]> {
      return spans.get(body.traceId) ?? [];
    },
    async 'own-system'(body: { file: string; ms: number }) {
      timings.push({ kind: 'own system', label: body.file, ms: body.ms });
      return {};
    },
    async 'peppol/start'() {
      validator ??= timed('Peppol validator', 'one JVM for the run', () => startPeppolValidator(opts.peppolJar));
      const v = await validator;
      return { rules: v.rules, warmed: v.warmed, warm_up_ms: v.warmUpMs };
    },
    async 'peppol/validate'(body: { id: string; xml: string }) {
      if (!validator) await handlers['peppol/start']({});
      return (await validator!).validate(body.id, body.xml);
    },
    async browser() {
      browser ??= timed('Chromium', 'one browser for the run', async () => {
        const { chromium } = await import('playwright-core');
        return chromium.launchServer({ executablePath: opts.chromium, headless: true, args: CHROMIUM_FLAGS });
      });
      return { ws_endpoint: (await browser).wsEndpoint() };
    },
  };

  const server = http.createServer((req, res) => {
    const prefix = `/${token}/`;
    const name = req.url?.startsWith(prefix) ? req.url.slice(prefix.length) : '';
    const handler = req.method === 'POST' ? handlers[name] : undefined;
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const answer = await handler(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        } catch (error) {
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (error as Error).stack ?? String(error) }));
        }
      })();
    });
  });
  // A file may wait minutes for its system on a crowded machine: no server-side timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  return {
    url: `http://127.0.0.1:${port}/${token}`,
    timings: () => [...timings],
    async stop() {
      stopping = true;
      server.closeAllConnections();
      server.close();
      const systems = await Promise.allSettled(everyStart);
      await Promise.all([
        ...systems.map((s) => (s.status === 'fulfilled' ? stopPooled(s.value) : undefined)),
        validator?.then((v) => v.stop(), () => undefined),
        browser?.then((b) => b.close(), () => undefined),
      ]);
    },
  };
}

/** The pool of this run, for test helpers: `undefined` outside `npm test`. */
export function testPoolUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.CUADRA_TEST_POOL || undefined;
}

/** Calls the pool (by default the run's, `CUADRA_TEST_POOL`); throws with the pool's own message when it fails. */
export async function askTestPool<T>(what: string, body: unknown = {}, url = testPoolUrl()): Promise<T> {
  if (!url) throw new Error('CUADRA_TEST_POOL is not set: run the tests with `npm test`.');
  // The pool is asked from 127.0.0.1 whatever address this file's other connections use, on a
  // connection of its own (`agent: false`): Node's global agent keeps sockets alive, and an ask made
  // as the pool's server closes an idle one (its 5 s keep-alive timeout) met a "socket hang up" — a
  // file that leased a system and asked it to kill a subgraph ~5 s later failed so in a whole run.
  const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(`${url}/${what}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      r.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  if (res.status !== 200) throw new Error(`the test pool could not ${what}: ${res.text}`);
  return JSON.parse(res.text) as T;
}
