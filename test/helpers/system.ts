import { createECDH, createHash, createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { connectDatabase, Governance, newId } from '@cuadra/shared';
import { checkOutput } from '@cuadra/shared/testing';
import { Redis } from 'ioredis';
import { Agent, setGlobalDispatcher } from 'undici';
import { expect } from 'vitest';
import { buildProducts } from '../../gateway/src/catalog.ts';
import { IdentityStore } from '../../gateway/src/identity/store.ts';
import { hashPassword, PeopleStore, peopleModels } from '../../gateway/src/identity/people.ts';
import { repoRoot } from '../../scripts/infra.ts';
import { startSystem, type RunningSystem, type ServiceProcess } from '../../scripts/system.ts';
import { askTestPool, SHARED_SYSTEM_ENV, testPoolUrl, type ExclusiveSystemInfo, type ExportedSpan, type SharedSystemInfo } from '../../scripts/test-pool.ts';

/** Where a service of the system answers, and its process id (for benches that read /proc). */
export interface ServiceEndpoint {
  name: string;
  url: string;
  port: number;
  pid: number;
}

/** A whole Cuadra system for a test file, plus a way to open workspaces and keys in it. */
export interface TestSystem {
  gatewayUrl: string;
  subgraphs: Record<string, ServiceEndpoint>;
  gateway: ServiceEndpoint;
  keys: { privateKey: string; publicKey: string };
  /** The ledger's Ed25519 key pair; its public key verifies `Ledger-Receipt` values. */
  ledgerKeys: { privateKey: string; publicKey: string };
  /** The services' key pair (peer reads; the agents service signs its runs' assertions with it). */
  serviceKeys: { privateKey: string; publicKey: string };
  /** `CUADRA_SEAL_KEY` of every service of this system. */
  sealKey: string;
  /** Whether this file shares its worker's system with other files (see {@link startTestSystem}). */
  shared: boolean;
  identity: IdentityStore;
  /** Name of the gateway's database in this system. */
  gatewayDb: string;
  /** The governance stores of this system (policies, approvals, ledger), for setting up cases. */
  governanceFor(): Governance;
  /** Opens a workspace; returns its id and owner key. */
  workspace(name?: string): Promise<{ workspace_id: string; api_key: string; key_id: string }>;
  /** Creates another key in a workspace (as the operator does: no person behind it, so it decides no approval). */
  key(workspace: string, role: string, patterns?: string[]): Promise<{ id: string; api_key: string }>;
  /**
   * A person who is a member of the workspace with `role`, and an API key they made (it acts as them:
   * it may decide approvals, never their own requests).
   */
  person(workspace: string, role: string, name?: string): Promise<{ user_id: string; email: string; api_key: string; key_id: string }>;
  /** Calls the gateway as a client would. */
  fetch(pathname: string, init?: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  invoke(tool: string, input: unknown, key: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  /** {@link invoke} that expects 200 and answers the tool's output (any other status throws, with the body). */
  output(tool: string, input: unknown, key: string, headers?: Record<string, string>): Promise<any>;
  /** Kills one subgraph (SIGKILL, as a crash would). Own systems only. */
  killSubgraph(name: string): Promise<void>;
  /** Starts a killed subgraph again on the same port. Own systems only. */
  restartSubgraph(name: string): Promise<void>;
  /** Starts one more gateway on the same subgraphs, databases and Redis (and the file's `gatewayEnv`, then `env` over it). Own systems only. */
  startAnotherGateway(env?: Record<string, string>): Promise<ServiceEndpoint>;
  /** Ends an own system; for a shared one, closes this file's connections and leaves the system running. */
  stop(): Promise<void>;
}

/** Options for {@link startTestSystem}. */
export interface TestSystemOptions {
  /** A system of this file's own even when the shared one would do (e.g. the file reads or changes what every workspace shares). */
  own?: boolean;
  /** Servers of this file's own (a file that kills or restarts the database or Redis): its system is its own too. */
  mongoUrl?: string;
  redisUrl?: string;
  /** Processes of every subgraph (scripts/system.ts `replicas`): the system is the file's own. */
  replicas?: number;
  /**
   * Settings of the file's gateway alone (quotas, which only the gateway reads): the file is lent a
   * system running `env` (pass {@link OWN_SYSTEM_SETTINGS}) and answers through a gateway of its own
   * on it with these laid over, as does every gateway `startAnotherGateway()` adds — a gateway start
   * instead of a whole system's.
   */
  gatewayEnv?: Record<string, string>;
  /**
   * A system of its own on databases already written (bench/scale.ts's `BENCH_REUSE`): their prefix and the
   * keys they were written with (the ledger's chain is signed by `ledgerKeys`, sealed fields by `sealKey`).
   */
  reuse?: { dbPrefix: string; keys: { privateKey: string; publicKey: string }; ledgerKeys: { privateKey: string; publicKey: string }; sealKey: string };
}

/**
 * The key pair that signs the OAuth access tokens of the systems run with {@link OWN_SYSTEM_SETTINGS}
 * (oauth.test.ts mints its own tokens with it). Derived from a fixed text, so every worker's settings
 * name the same key: settings that differ are another system. A test key, never a product one.
 */
export const OWN_SYSTEM_TOKEN_KEYS = signingKeyPairFrom('cuadra test systems: oauth token signing key');

/** An ES256 (P-256) key pair, PEM, whose private scalar is SHA-256 of `text`. */
function signingKeyPairFrom(text: string): { privateKey: string; publicKey: string } {
  const d = createHash('sha256').update(text).digest();
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  // Uncompressed point: 0x04, then x and y (32 bytes each).
  const point = ecdh.getPublicKey();
  const key = createPrivateKey({ format: 'jwk', key: { kty: 'EC', crv: 'P-256', d: d.toString('base64url'), x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') } });
  return { privateKey: key.export({ type: 'pkcs8', format: 'pem' }) as string, publicKey: createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string };
}

/**
 * The settings of the files that need a system of their own — the crash tests (they SIGKILL a
 * subgraph mid-work and count what was lost, doubled or half-done) and the others that kill, restart
 * or add a process, or need a tight limit: an attempt whose process died is settled after 2 s (60 s
 * by default), a derived write left pending is repaired after 1 s (60 s), an orphaned booking claim
 * lapses after 1 s (60 s), a site's forms take 3 posts per visitor and 5 per site in 10 minutes
 * (20 and 300), sign-in takes 4 attempts per e-mail in 15 minutes (10), access tokens are signed
 * with {@link OWN_SYSTEM_TOKEN_KEYS}, no per-credential or per-workspace rate limit gets in the way of a burst, outbound
 * calls may reach loopback (a test's CalDAV server, model or MCP server), bookings reach crm and finance within
 * 200 ms, an agent run's lease lapses after 1.5 s and its spans go to the test pool, campaign sends
 * are claimed for 3 s and workspaces may be given a marketing test clock. Every
 * such file runs with these same settings, so the test pool lends them one system in turn (two when
 * both workers want one) instead of starting one per file: a start is ~10 s of both cores.
 */
export const OWN_SYSTEM_SETTINGS: Readonly<Record<string, string>> = {
  CUADRA_ACTION_LEASE_MS: '2000', CUADRA_REPAIR_AFTER_MS: '1000', CUADRA_BOOKING_ORPHAN_MS: '1000',
  SITE_FORM_RATE_LIMIT: '3/600', SITE_FORM_SITE_RATE_LIMIT: '5/600', LOGIN_RATE_LIMIT: '4/900',
  RATE_LIMIT_PER_CREDENTIAL: '100000/60', RATE_LIMIT_PER_WORKSPACE: '100000/60',
  CUADRA_TOKEN_SIGNING_KEY: OWN_SYSTEM_TOKEN_KEYS.privateKey,
  // bookings-faults: a real CalDAV server on loopback, and crm's and finance's booking pulls every 200 ms (2 s).
  CUADRA_OUTBOUND_PRIVATE: 'allow', CRM_BOOKING_PULL_INTERVAL_MS: '200', INVOICES_BOOKING_PULL_INTERVAL_MS: '200',
  // Inventory pulls finance's posted documents soon after they post, and finance inventory's entries soon after they are made (inventory-journal-pull.test.ts).
  INVENTORY_FINANCE_PULL_INTERVAL_MS: '300', INVOICES_INVENTORY_PULL_INTERVAL_MS: '300',
  // agent-runs.test.ts: a dead agents process's run is taken over after 1.5 s (30 s), ledger triggers
  // look every 0.4 s (5 s), and runs' spans go to the pool's OTLP receiver (fixed for the run; a file
  // reads back its own traces: testPoolSpans).
  CUADRA_RUN_LEASE_MS: '1500', CUADRA_LEDGER_TRIGGER_MS: '400',
  // marketing-campaign.test.ts: a campaign's row claim lapses after 3 s (120 s) and an in-doubt one is sent
  // again after 3 s (120 s); the sender looks every 200 ms (1 s), the bounce mailboxes every 500 ms (10 s);
  // a workspace may be given a test clock (lib/clock.ts in marketing).
  MARKETING_SEND_LEASE_MS: '3000', MARKETING_IN_DOUBT_GRACE_MS: '3000', MARKETING_SENDER_INTERVAL_MS: '200',
  MARKETING_MAILBOX_INTERVAL_MS: '500', MARKETING_TEST_CLOCKS: 'on',
  ...(testPoolUrl() ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${testPoolUrl()}/otlp/v1/traces` } : {}),
};

/** The spans of `traceId` that the systems exported to the test pool's OTLP receiver (OWN_SYSTEM_SETTINGS). */
export function testPoolSpans(traceId: string): Promise<ExportedSpan[]> {
  return askTestPool<ExportedSpan[]>('otlp/spans', { traceId });
}

// What a file does to the processes themselves: such a file cannot share them with others.
const PROCESS_CONTROL = /\.(killSubgraph|restartSubgraph|startAnotherGateway)\s*\(/;

/**
 * Why the test file `file` cannot share its worker's system, or `null` when it can. A file shares
 * unless it asks for its own, runs the services with other settings, or controls their processes
 * (kills, restarts, adds a gateway). (A helper loaded from another tree — a copy of the product —
 * is refused by the pool itself: the shared systems run this tree's code.)
 */
export function ownSystemReason(env: Record<string, string>, options: TestSystemOptions, testFile?: string): string | null {
  // A bench (no pool, outside vitest) has no test state to read.
  if (!testPoolUrl()) return 'no test pool (run the tests with `npm test`)';
  const file = testFile ?? expect.getState().testPath;
  if (options.own) return 'asked for';
  if (options.reuse) return 'databases already written';
  if ((options.replicas ?? 1) > 1) return 'replicas of its own';
  if (options.mongoUrl || options.redisUrl) return 'servers of its own';
  if (options.gatewayEnv) return 'a gateway with settings of its own';
  const differs = Object.entries(env).filter(([k, v]) => SHARED_SYSTEM_ENV[k] !== v).map(([k]) => k);
  if (differs.length > 0) return `settings of its own (${differs.join(', ')})`;
  if (file && PROCESS_CONTROL.test(readFileSync(file, 'utf8'))) return 'it kills, restarts or adds processes';
  return null;
}

/**
 * The system a test file runs against, over real HTTP.
 *
 * Under `npm test` a file gets the **system its vitest worker shares** with the other files that
 * worker runs (started once by scripts/test-pool.ts), and keeps to workspaces it opens itself;
 * its connections leave from a loopback address of its own, so limits keyed by the client's
 * address count it apart. A file gets a system of its own — six processes started for it, on
 * databases named after `label` — when it passes settings the shared system does not run with
 * (`env`), asks for one (`{ own: true }`), kills, restarts or adds a process, or is another tree's
 * code. `stop()` ends an own system and only lets go of a shared one.
 */
export async function startTestSystem(label: string, env: Record<string, string> = {}, options: TestSystemOptions = {}): Promise<TestSystem> {
  // A file that kills or restarts a server passes its own (`mongoUrl`, `redisUrl`); the others use the ones `npm test` started.
  const mongoUrl = options.mongoUrl ?? process.env.MONGO_URL;
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL;
  if (!mongoUrl || !redisUrl) throw new Error('MONGO_URL and REDIS_URL are not set: run the tests with `npm test`.');
  const reason = ownSystemReason(env, options);
  if (reason === null) {
    const shared = await askTestPool<SharedSystemInfo | { refused: string }>('system', { worker: process.env.VITEST_POOL_ID ?? '1', root: repoRoot });
    if (!('refused' in shared)) return sharedSystem(shared, mongoUrl, redisUrl);
  } else if (lendable(reason, options)) {
    // Kills, restarts or other settings on this run's servers: a system the pool lends to this file
    // alone, and keeps for the next file with the same settings once this one lets go.
    const file = path.relative(process.cwd(), expect.getState().testPath ?? label);
    const own = await askTestPool<ExclusiveSystemInfo | { refused: string }>('exclusive', { root: repoRoot, env, file, worker: process.env.VITEST_POOL_ID ?? '1' });
    // Kept for the next file when these are the settings such files share.
    if (!('refused' in own)) return lentSystem(own, mongoUrl, redisUrl, isDeepStrictEqual(env, OWN_SYSTEM_SETTINGS), options.gatewayEnv);
  }
  const started = performance.now();
  const prefix = options.reuse?.dbPrefix ?? `t_${label}_${randomBytes(3).toString('hex')}`;
  const system = await startSystem({
    mongoUrl,
    redisUrl,
    dbPrefix: prefix,
    ...(options.reuse ? { keys: options.reuse.keys, ledgerKeys: options.reuse.ledgerKeys, sealKey: options.reuse.sealKey } : {}),
    ports: 'free',
    replicas: options.replicas,
    logDir: path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'logs', prefix),
    // Rate-limit counters live in Redis under the credential id, which is unique per key.
    env: { ...SHARED_SYSTEM_ENV, ...env, ...options.gatewayEnv },
  });
  if (testPoolUrl()) await askTestPool('own-system', { file: path.relative(process.cwd(), expect.getState().testPath ?? label), ms: performance.now() - started }).catch(() => undefined);
  return testSystem(ownProcesses(system), prefix, mongoUrl, redisUrl, false);
}

/**
 * Whether the pool may lend the file a system instead of it starting one (a start is ~10 s of two
 * busy cores): it may when the file kills, restarts or adds processes, or runs other settings, on
 * this run's database and Redis. A file that asked for its own, runs replicas or servers of its own
 * starts its own.
 */
function lendable(reason: string, options: TestSystemOptions): boolean {
  return Boolean(testPoolUrl()) && !options.own && !options.reuse && !options.mongoUrl && !options.redisUrl && (options.replicas ?? 1) <= 1 && !reason.startsWith('no test pool');
}

/**
 * A system the pool lent this file alone: its processes are this file's to kill, restart and add to
 * (through the pool, which started them); `stop()` gives it back, and the pool puts it right (killed
 * subgraphs started again, added gateways stopped) before lending it to the next file with the same
 * settings. The file keeps to workspaces of its own, as on a shared system. With `gatewayEnv`, the
 * file's calls go through a gateway added with those settings (the pool stops it when the file lets go).
 */
async function lentSystem(info: ExclusiveSystemInfo, mongoUrl: string, redisUrl: string, keep: boolean, gatewayEnv?: Record<string, string>): Promise<TestSystem> {
  setGlobalDispatcher(new Agent({ localAddress: info.sourceAddress }));
  const subgraphs = { ...info.subgraphs };
  let given = false;
  const anotherGateway = (env?: Record<string, string>) => askTestPool<ServiceEndpoint>('exclusive/another-gateway', { lease: info.lease, env: { ...gatewayEnv, ...env } });
  const gateway = gatewayEnv ? await anotherGateway().catch(async (err: unknown) => {
    await askTestPool('exclusive/release', { lease: info.lease, keep });
    throw err;
  }) : info.gateway;
  const running: ProcessesOf = {
    gatewayUrl: gateway.url,
    gateway,
    subgraphs,
    keys: info.keys,
    ledgerKeys: info.ledgerKeys,
    serviceKeys: info.serviceKeys,
    sealKey: info.sealKey,
    killSubgraph: async (name) => {
      await askTestPool('exclusive/kill', { lease: info.lease, name });
    },
    restartSubgraph: async (name) => {
      subgraphs[name] = await askTestPool<ServiceEndpoint>('exclusive/restart', { lease: info.lease, name });
    },
    startAnotherGateway: anotherGateway,
    stop: async () => {
      if (given) return;
      given = true;
      await askTestPool('exclusive/release', { lease: info.lease, keep });
    },
  };
  return testSystem(running, info.dbPrefix, mongoUrl, redisUrl, false);
}

/** A shared system as this file sees it: the same servers, its own connections, no control of the processes. */
async function sharedSystem(info: SharedSystemInfo, mongoUrl: string, redisUrl: string): Promise<TestSystem> {
  // Every connection this file opens (fetch, its OAuth and MCP clients) leaves from its own address.
  setGlobalDispatcher(new Agent({ localAddress: info.sourceAddress }));
  const refuse = (what: string) => async (): Promise<never> => {
    throw new Error(`${what} would disturb every file sharing this worker's system: take a system of the file's own, startTestSystem(label, env, { own: true })`);
  };
  const running: ProcessesOf = {
    gatewayUrl: info.gatewayUrl,
    gateway: info.gateway,
    subgraphs: info.subgraphs,
    keys: info.keys,
    ledgerKeys: info.ledgerKeys,
    serviceKeys: info.serviceKeys,
    sealKey: info.sealKey,
    killSubgraph: refuse('Killing a subgraph'),
    restartSubgraph: refuse('Restarting a subgraph'),
    startAnotherGateway: refuse('Another gateway'),
    // The pool freezes the system until the worker's next file asks for it, and stops it when the run ends.
    stop: async () => {
      await askTestPool('system/release', { worker: process.env.VITEST_POOL_ID ?? '1' });
    },
  };
  return testSystem(running, info.dbPrefix, mongoUrl, redisUrl, true);
}

/** The processes of a system, started here (own) or by the pool (shared). */
type ProcessesOf = Pick<TestSystem, 'gatewayUrl' | 'gateway' | 'subgraphs' | 'keys' | 'ledgerKeys' | 'serviceKeys' | 'sealKey' | 'killSubgraph' | 'restartSubgraph' | 'startAnotherGateway' | 'stop'>;

/** A service process as the tests see it. */
function endpoint(p: ServiceProcess): ServiceEndpoint {
  return { name: p.name, url: p.url, port: p.port, pid: p.child.pid ?? 0 };
}

/** An own system's processes, with their current endpoints (a restarted subgraph has a new process). */
function ownProcesses(system: RunningSystem): ProcessesOf {
  return {
    gatewayUrl: system.gatewayUrl,
    get gateway() { return endpoint(system.gateway); },
    get subgraphs() { return Object.fromEntries(Object.entries(system.subgraphs).map(([name, p]) => [name, endpoint(p)])); },
    keys: system.keys,
    ledgerKeys: system.ledgerKeys,
    serviceKeys: system.serviceKeys,
    sealKey: system.sealKey,
    killSubgraph: (name) => system.killSubgraph(name),
    restartSubgraph: (name) => system.restartSubgraph(name),
    startAnotherGateway: async (env) => endpoint(await system.startAnotherGateway(env)),
    stop: () => system.stop(),
  };
}

/** The password hash of every person {@link TestSystem.person} makes in this process (for a password nobody holds). */
let throwawayPasswordHash: Promise<string> | undefined;

async function testSystem(system: ProcessesOf, prefix: string, mongoUrl: string, redisUrl: string, shared: boolean): Promise<TestSystem> {
  const db = await connectDatabase(mongoUrl, `${prefix}_gateway`);
  const redis = new Redis(redisUrl);
  // A file that kills Redis (outage-edges) makes this client fail to reconnect until it is back: expected, not printed.
  redis.on('error', () => undefined);
  const identity = new IdentityStore(db, redis);
  await identity.init();
  const governanceDb = await connectDatabase(mongoUrl, `${prefix}_governance`);
  const governance = new Governance(governanceDb);
  const people = new PeopleStore(db);

  async function call(pathname: string, init: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${system.gatewayUrl}${pathname}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  }

  async function invoke(tool: string, input: unknown, key: string, headers?: Record<string, string>) {
    const answer = await call(`/v1/tools/${tool}:invoke`, { key, body: input, headers });
    // Every real output is held to the output schema its tool declares (issue 15).
    if (answer.status === 200) checkOutput(tool, outputSchemas().get(tool), answer.body?.output);
    return answer;
  }

  return {
    gatewayUrl: system.gatewayUrl,
    get gateway() { return system.gateway; },
    get subgraphs() { return system.subgraphs; },
    keys: system.keys,
    ledgerKeys: system.ledgerKeys,
    serviceKeys: system.serviceKeys,
    sealKey: system.sealKey,
    shared,
    killSubgraph: system.killSubgraph,
    restartSubgraph: system.restartSubgraph,
    startAnotherGateway: system.startAnotherGateway,
    identity,
    gatewayDb: `${prefix}_gateway`,
    governanceFor: () => governance,
    workspace: (name = 'Test SAS') => identity.createWorkspace({ name, ownerEmail: 'owner@example.com' }),
    key: (workspace, role, patterns) => identity.createApiKey({ workspace, name: `${role} key`, role, patterns }),
    async person(workspace, role, name = role) {
      const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}.${randomBytes(3).toString('hex')}@people.example`;
      // Such a person never signs in (they act through the key they made): their record carries the hash
      // of a password nobody holds, made once per process — scrypt at the product's cost is ~0.35 s of a
      // core and 128 MiB a hash, and governance alone makes eight such people.
      throwawayPasswordHash ??= hashPassword(`${randomBytes(12).toString('hex')}Aa1`);
      const user = await peopleModels(db).users.create({ _id: newId('usr'), email, name, password_hash: await throwawayPasswordHash, created_at: new Date() });
      await people.setMembership(workspace, user._id, role);
      const key = await identity.createApiKey({ workspace, name: `${name}'s key`, role, createdByPerson: user._id });
      return { user_id: user._id, email, api_key: key.api_key, key_id: key.id };
    },
    fetch: call,
    invoke,
    async output(tool, input, key, headers) {
      const answer = await invoke(tool, input, key, headers);
      if (answer.status !== 200) throw new Error(`${tool} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body.output;
    },
    async stop() {
      await system.stop();
      redis.disconnect();
      await Promise.all([db.close(), governanceDb.close()]);
    },
  };
}

let schemas: Map<string, unknown> | undefined;
/** The output schemas the build wrote into the catalog, by tool. */
function outputSchemas(): Map<string, unknown> {
  schemas ??= new Map(buildProducts().tools.filter((t) => t.output_schema).map((t) => [t.name, t.output_schema]));
  return schemas;
}
