// Starts the whole Cuadra system as separate processes: the subgraphs and the gateway, on a
// MongoDB-protocol server and Redis given by URL. Used by `npm start`, the end-to-end tests
// and the bench, so all three run exactly the same thing.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateSigningKeyPair } from '../shared/src/credentials.ts';
import { INSTANCE_HEADER } from '../shared/src/instance.ts';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { freePort, repoRoot } from './infra.ts';

/** One service process of the system. */
export interface ServiceProcess {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
}

/** Options for {@link startSystem}. */
export interface SystemOptions {
  mongoUrl: string;
  redisUrl: string;
  /** Database names are `<dbPrefix>_<service>`; tests use a fresh prefix per file. */
  dbPrefix?: string;
  /** `default`: gateway 4000, subgraphs 4101–4105 (npm start); `free`: any free ports (tests). */
  ports?: 'default' | 'free';
  /** Where each service writes its log (`<name>.log`). */
  logDir: string;
  /** ES256 key pair of the gateway's assertions; generated when absent. */
  keys?: { privateKey: string; publicKey: string };
  /** ES256 key pair of OAuth access tokens (kept separate from assertions); generated when absent. */
  tokenKeys?: { privateKey: string; publicKey: string };
  /** Ed25519 key pair that signs ledger receipts and checkpoints (`CUADRA_LEDGER_KEY`, every service); generated when absent. */
  ledgerKeys?: { privateKey: string; publicKey: string };
  /** Extra environment for every service (e.g. rate-limit quotas, LOG_LEVEL). */
  env?: Record<string, string>;
  /** The key that seals secrets at rest (`CUADRA_SEAL_KEY`, 32 bytes base64, given to every service); generated when absent. */
  sealKey?: string;
  /** Gateway port when `ports` is `default` (default 4000). */
  gatewayPort?: number;
  /**
   * Processes of every subgraph (default 1), all on the subgraph's one database; the gateways are
   * given every replica's URL (`SUBGRAPH_<NAME>_URL` as a comma-separated list), and each replica
   * reads its peers at the replicas of its own rank. Needs `ports: 'free'` beyond the first.
   */
  replicas?: number;
  /**
   * The file each service runs (`gateway`, or a subgraph's name); default the product's own
   * `index.ts`. Only the pool's own test gives stand-ins (test/fixtures/healthz-service.ts), to check
   * the pool's bookkeeping without the CPU of a whole system.
   */
  serviceEntry?: (service: string) => string;
}

/** A running system; `stop()` ends only the processes it started. */
export interface RunningSystem {
  gatewayUrl: string;
  subgraphs: Record<string, ServiceProcess>;
  /** Every process of each subgraph, the one in `subgraphs` first (see {@link SystemOptions.replicas}). */
  replicas: Record<string, ServiceProcess[]>;
  gateway: ServiceProcess;
  keys: { privateKey: string; publicKey: string };
  /** The ledger's Ed25519 key pair; its public key verifies `Ledger-Receipt` values. */
  ledgerKeys: { privateKey: string; publicKey: string };
  /** The services' ES256 key pair (peer reads, agent run assertions). */
  serviceKeys: { privateKey: string; publicKey: string };
  /** `CUADRA_SEAL_KEY` every service was given (tests recompute what is derived from it). */
  sealKey: string;
  /** Kills one subgraph (SIGKILL, as a crash would). */
  killSubgraph(name: string): Promise<void>;
  /** Starts a killed subgraph again on the same port. */
  restartSubgraph(name: string): Promise<void>;
  /**
   * Starts one more gateway instance on the same subgraphs, databases and Redis (for shared-limit
   * tests); `env` is laid over the first gateway's settings (a quota of its own).
   */
  startAnotherGateway(env?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

const nodeBin = process.execPath;
/**
 * Node's on-disk cache of compiled modules (NODE_COMPILE_CACHE; keyed by each file's content and
 * the V8 version, so a changed file is compiled afresh): a service's start was ~3 s of CPU, a third
 * of it compiling the same dependencies again; the tests start six services per file.
 */
export const compileCacheDir = path.join(repoRoot, '.cache', 'node-compile');

/**
 * V8 flags every service starts with (issue 33, "A service's memory" in ARCHITECTURE.md; docker-compose.yml
 * sets the same): semi-spaces of at most 16 MB (V8's default grows them to 64 MB under a burst of reads,
 * and the pages stay resident) and an old space of 1,024 MB (V8 then grows it by a smaller factor between
 * full collections). Put before the environment's own NODE_OPTIONS (a flag given twice: the later one
 * counts). `CUADRA_SERVICE_NODE_OPTIONS` replaces them ('' = V8's defaults), for benches that compare.
 */
export const SERVICE_NODE_OPTIONS = '--max-semi-space-size=16 --max-old-space-size=1024 --expose-gc';
const serviceNodeOptions = () => process.env.CUADRA_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS;

/** The instance token each service was started with (it answers it on /healthz: shared/src/instance.ts). */
const instanceOf = new WeakMap<ChildProcess, string>();

/**
 * Waits until `child` itself answers `url` (200, or 503 while its peers come up): an answer without
 * the child's instance token comes from another process on that port, and does not count. Ends when
 * the child exits, or when the time is up: `CUADRA_START_TIMEOUT_MS`, default 120 s (a service starts
 * in a few seconds on a quiet machine; the wait only matters when the machine is crowded).
 */
export async function waitHealthy(url: string, child: ChildProcess, name: string, logFile: string, timeoutMs = Number(process.env.CUADRA_START_TIMEOUT_MS) > 0 ? Number(process.env.CUADRA_START_TIMEOUT_MS) : 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if ((res.status === 200 || res.status === 503) && res.headers.get(INSTANCE_HEADER) === instanceOf.get(child)) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n') : '';
  throw new Error(`${name} did not come up (${child.exitCode ?? child.signalCode ?? 'timeout'}). Last log lines:\n${tail}`);
}

export function spawnService(name: string, entry: string, env: Record<string, string>, logDir: string): ChildProcess {
  mkdirSync(logDir, { recursive: true });
  const log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
  const instance = randomBytes(9).toString('base64url');
  const nodeOptions = [serviceNodeOptions(), env.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? ''].filter(Boolean).join(' ');
  const child = spawn(nodeBin, [entry], { cwd: repoRoot, env: { NODE_COMPILE_CACHE: compileCacheDir, ...process.env, ...env, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}), CUADRA_INSTANCE: instance }, stdio: ['ignore', 'pipe', 'pipe'] });
  instanceOf.set(child, instance);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A fresh Ed25519 key pair (PEM) for the ledger's receipts and checkpoints. */
export function generateLedgerKeyPair(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
}

/** Reads or creates the gateway's signing key pair under `dir` (private key mode 0600). */
/** The seal key under `dir` (`seal-key`, 32 random bytes in base64, mode 0600), made once. */
export function loadOrCreateSealKey(dir: string): string {
  const file = path.join(dir, 'seal-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

export function loadOrCreateKeys(dir: string, name = 'signing-key', generate = generateSigningKeyPair): { privateKey: string; publicKey: string } {
  const priv = path.join(dir, `${name}.pem`);
  const pub = path.join(dir, `${name}.pub.pem`);
  if (existsSync(priv) && existsSync(pub)) return { privateKey: readFileSync(priv, 'utf8'), publicKey: readFileSync(pub, 'utf8') };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keys = generate();
  writeFileSync(priv, keys.privateKey, { mode: 0o600 });
  writeFileSync(pub, keys.publicKey);
  return keys;
}

/**
 * Starts a system ({@link startSystemOnce}). With ports chosen free, a port can be taken by another
 * process between the choice and the service's bind (the service then dies of EADDRINUSE): the
 * start is then made again on other ports, up to three times.
 */
export async function startSystem(opts: SystemOptions): Promise<RunningSystem> {
  const attempts = opts.ports === 'free' && opts.gatewayPort === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSystemOnce(opts);
    } catch (err) {
      if (attempt >= attempts || !/EADDRINUSE/.test((err as Error).message)) throw err;
    }
  }
}

/** Starts the subgraphs and the gateway, each as its own process, all at once, and waits until they answer. */
async function startSystemOnce(opts: SystemOptions): Promise<RunningSystem> {
  const keys = opts.keys ?? generateSigningKeyPair();
  const ledgerKeys = opts.ledgerKeys ?? generateLedgerKeyPair();
  // Subgraphs read each other's graph (an invoice's buyer from crm) with assertions signed by this
  // pair: made per start, as every subgraph of one system starts (and restarts) with it.
  const serviceKeys = generateSigningKeyPair();
  const peerUrls: Record<string, string> = {};
  const prefix = opts.dbPrefix ?? 'cuadra';
  const baseEnv = {
    MONGO_URL: opts.mongoUrl, REDIS_URL: opts.redisUrl, HOST: '127.0.0.1', GOVERNANCE_DB: `${prefix}_governance`, REDIS_KEY_PREFIX: prefix,
    CUADRA_SEAL_KEY: opts.sealKey ?? randomBytes(32).toString('base64'), CUADRA_LEDGER_KEY: ledgerKeys.privateKey, ...opts.env,
  };
  const subgraphs: Record<string, ServiceProcess> = {};
  const started: ServiceProcess[] = [];

  // The agents subgraph calls tools through the gateway's pipeline for its runs (issue 37): it needs
  // the gateway's address before the gateway starts.
  const gatewayPort = opts.gatewayPort ?? (opts.ports === 'free' ? await freePort() : 4000);
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const entryOf = opts.serviceEntry ?? ((service: string) => (service === 'gateway' ? path.join(repoRoot, 'gateway', 'src', 'index.ts') : path.join(repoRoot, 'subgraphs', service, 'src', 'index.ts')));
  const launchSubgraph = async (name: string, port: number, peers = peerUrls, logName = name) => {
    const env = { ...baseEnv, ...peers, CUADRA_GATEWAY_URL: gatewayUrl, PORT: String(port), MONGO_DB: `${prefix}_${name}`, CUADRA_ASSERTION_PUBLIC_KEY: keys.publicKey, CUADRA_SERVICE_KEY: serviceKeys.privateKey, CUADRA_SERVICE_PUBLIC_KEY: serviceKeys.publicKey };
    const child = spawnService(logName, entryOf(name), env, opts.logDir);
    const proc = { name, port, url: `http://127.0.0.1:${port}`, child };
    // Counted as started at once: if another subgraph fails to come up, this one is stopped too.
    started.push(proc);
    await waitHealthy(`${proc.url}/healthz`, child, logName, path.join(opts.logDir, `${logName}.log`));
    return proc;
  };

  try {
    const ports = await Promise.all(SUBGRAPHS.map(async (s) => (opts.ports === 'free' ? freePort() : s.port)));
    SUBGRAPHS.forEach((s, i) => { peerUrls[`SUBGRAPH_${s.name.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[i]}`; });
    // Links a service puts in e-mails and pages (unsubscribe, a site's pages) start at the public URL.
    peerUrls.PUBLIC_URL = opts.env?.PUBLIC_URL ?? gatewayUrl;
    const gatewayEnv: Record<string, string> = {
      ...baseEnv,
      PORT: String(gatewayPort),
      MONGO_DB: `${prefix}_gateway`,
      PUBLIC_URL: opts.env?.PUBLIC_URL ?? gatewayUrl,
      CUADRA_SIGNING_KEY: keys.privateKey,
      // Checks the agents service's run assertions (issue 37).
      CUADRA_SERVICE_PUBLIC_KEY: serviceKeys.publicKey,
      CUADRA_TOKEN_SIGNING_KEY: opts.env?.CUADRA_TOKEN_SIGNING_KEY ?? (opts.tokenKeys ?? generateSigningKeyPair()).privateKey,
    };
    // Replicas beyond the first: their own ports, each rank reading its peers at the same rank.
    const replicaCount = Math.max(1, opts.replicas ?? 1);
    if (replicaCount > 1 && opts.ports !== 'free') throw new Error('startSystem: replicas need ports: free');
    const extraRanks = await Promise.all(Array.from({ length: replicaCount - 1 }, () => Promise.all(SUBGRAPHS.map(() => freePort()))));
    const rankPeers = extraRanks.map((rankPorts) => ({ ...peerUrls, ...Object.fromEntries(SUBGRAPHS.map((s, i) => [`SUBGRAPH_${s.name.toUpperCase()}_URL`, `http://127.0.0.1:${rankPorts[i]}`])) }));
    SUBGRAPHS.forEach((s, i) => { gatewayEnv[`SUBGRAPH_${s.name.toUpperCase()}_URL`] = [ports[i], ...extraRanks.map((r) => r[i])].map((p) => `http://127.0.0.1:${p}`).join(','); });
    // The gateway starts beside the subgraphs, not after them: it composes from the build's supergraph
    // and reaches a subgraph only when a call needs it (its /healthz answers 503 until every one is up),
    // so a system is up in the time of its slowest process, not the slowest subgraph plus the gateway.
    const gatewayChild = spawnService('gateway', entryOf('gateway'), gatewayEnv, opts.logDir);
    const gateway = { name: 'gateway', port: gatewayPort, url: gatewayUrl, child: gatewayChild };
    started.push(gateway);
    const [procs, extraProcs] = await Promise.all([
      Promise.all(SUBGRAPHS.map((s, i) => launchSubgraph(s.name, ports[i]))),
      Promise.all(extraRanks.map((rankPorts, rank) => Promise.all(SUBGRAPHS.map((s, i) => launchSubgraph(s.name, rankPorts[i], rankPeers[rank], `${s.name}.${rank + 2}`))))),
      waitHealthy(`${gatewayUrl}/healthz`, gatewayChild, 'gateway', path.join(opts.logDir, 'gateway.log')),
    ]);
    for (const p of procs) subgraphs[p.name] = p;
    const replicas: Record<string, ServiceProcess[]> = Object.fromEntries(procs.map((p) => [p.name, [p, ...extraProcs.map((rank) => rank.find((q) => q.name === p.name)!)]]));

    return {
      gatewayUrl,
      subgraphs,
      replicas,
      gateway,
      keys,
      ledgerKeys,
      serviceKeys,
      sealKey: baseEnv.CUADRA_SEAL_KEY,
      async killSubgraph(name) {
        const p = subgraphs[name];
        const exited = new Promise<void>((resolve) => p.child.once('exit', () => resolve()));
        p.child.kill('SIGKILL');
        await exited;
      },
      async startAnotherGateway(env = {}) {
        const port = await freePort();
        const name = `gateway-${port}`;
        const child = spawnService(name, entryOf('gateway'), { ...gatewayEnv, ...env, PORT: String(port) }, opts.logDir);
        const proc = { name, port, url: `http://127.0.0.1:${port}`, child };
        started.push(proc);
        await waitHealthy(`${proc.url}/healthz`, child, name, path.join(opts.logDir, `${name}.log`));
        return proc;
      },
      async restartSubgraph(name) {
        subgraphs[name] = await launchSubgraph(name, subgraphs[name].port);
      },
      async stop() {
        await Promise.all(started.filter((p) => p.name.startsWith('gateway')).map((p) => stopChild(p.child)));
        await Promise.all([...Object.values(subgraphs), ...Object.values(replicas).flatMap((r) => r.slice(1))].map((p) => stopChild(p.child)));
      },
    };
  } catch (err) {
    await Promise.all(started.map((p) => stopChild(p.child)));
    throw err;
  }
}
