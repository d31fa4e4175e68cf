// The systems test files share (issue 33): one per vitest worker, handed by the run's test pool
// (scripts/test-pool.ts) to each file in turn; each file speaks from a loopback address of its own;
// nothing a file can do to the processes reaches the other files; a system that died is replaced.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, fetch as fetchFrom } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumPath } from '../shared/src/pdf.ts';
import { repoRoot } from '../scripts/infra.ts';
import { askTestPool, startTestPool, type ExclusiveSystemInfo, type SharedSystemInfo, type TestPool } from '../scripts/test-pool.ts';
import { OWN_SYSTEM_SETTINGS, ownSystemReason, startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
const worker = process.env.VITEST_POOL_ID ?? '1';

beforeAll(async () => {
  sys = await startTestSystem('shared');
});
afterAll(async () => {
  await sys?.stop();
});

/** What another file of this worker would be handed. */
const anotherFile = () => askTestPool<SharedSystemInfo>('system', { worker, root: repoRoot });

describe("a worker's shared system", () => {
  it('is the one every file of the worker gets, each with a source address of its own', async () => {
    expect(sys.shared).toBe(true);
    const [a, b] = [await anotherFile(), await anotherFile()];
    expect(a.gatewayUrl).toBe(sys.gatewayUrl);
    expect(b.gatewayUrl).toBe(sys.gatewayUrl);
    expect(a.dbPrefix).toBe(b.dbPrefix);
    expect(a.sourceAddress).toMatch(/^127\.1\.\d+\.\d+$/);
    expect(a.sourceAddress).not.toBe(b.sourceAddress);
    // This file's connections leave from its address: a server of our own sees it.
    const echo = createServer((req, res) => res.end(req.socket.remoteAddress));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const seen = await (await fetch(`http://127.0.0.1:${(echo.address() as AddressInfo).port}/`)).text();
      expect(seen).toMatch(/^127\.1\.\d+\.\d+$/);
      expect([a.sourceAddress, b.sourceAddress]).not.toContain(seen);
    } finally {
      echo.close();
    }
  });

  it('counts a limit keyed by the client address per file: one file using up its sign-ups leaves the next its own', async () => {
    const [first, next] = [await anotherFile(), await anotherFile()];
    const signUp = (from: string, i: number) => fetchFrom(`${sys.gatewayUrl}/v1/auth/agent-signup`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, dispatcher: new Agent({ localAddress: from }),
      body: JSON.stringify({ email: `limite.${i}.${from.replaceAll('.', '-')}@shared.example`, workspace_name: `Límite ${i}`, agent_name: 'Bot' }),
    }).then((r) => r.status);
    // The production quota: 10 sign-ups an hour per client address.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await signUp(first.sourceAddress, i));
    expect(statuses).toEqual([...Array(10).fill(201), 429]);
    expect(await signUp(next.sourceAddress, 0)).toBe(201);
  });

  it('refuses what would disturb the other files: killing, restarting or adding a process', async () => {
    // Bracket notation: a file whose text calls these methods the usual way gets a system of its own.
    await expect(sys['killSubgraph']('crm')).rejects.toThrow(/own: true/);
    await expect(sys['restartSubgraph']('crm')).rejects.toThrow(/own: true/);
    await expect(sys['startAnotherGateway']()).rejects.toThrow(/own: true/);
    expect((await sys.fetch('/healthz')).status).toBe(200);
  });

  it('is refused to a helper from another tree: the shared systems run this tree’s code', async () => {
    const answer = await askTestPool<{ refused?: string }>('system', { worker, root: path.join(tmpdir(), 'a-copy-of-the-product') });
    expect(answer.refused).toMatch(/run the code of/);
  });
});

describe('which files take a system of their own', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuadra-own-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    writeFileSync(f, text);
    return f;
  };

  it('a file that asks, runs other settings, or controls the processes; not one with the shared settings', () => {
    const plain = file('plain.test.ts', "sys = await startTestSystem('plain');\nawait sys.invoke('parties.list', {}, key);\n");
    expect(ownSystemReason({}, {}, plain)).toBeNull();
    expect(ownSystemReason({ LOG_LEVEL: 'warn' }, {}, plain)).toBeNull();
    expect(ownSystemReason({}, { own: true }, plain)).toBe('asked for');
    expect(ownSystemReason({ RATE_LIMIT_PER_CREDENTIAL: '6/60', LOG_LEVEL: 'warn' }, {}, plain)).toBe('settings of its own (RATE_LIMIT_PER_CREDENTIAL)');
    expect(ownSystemReason({ LOG_LEVEL: 'debug' }, {}, plain)).toBe('settings of its own (LOG_LEVEL)');
    // Quotas only the gateway reads: a lent system with a gateway of the file's own, whatever its text says.
    expect(ownSystemReason({}, { gatewayEnv: { RATE_LIMIT_PER_CREDENTIAL: '6/60' } }, plain)).toBe('a gateway with settings of its own');
    for (const control of ['killSubgraph', 'restartSubgraph ', 'startAnotherGateway']) {
      expect(ownSystemReason({}, {}, file('control.test.ts', `await sys.${control}('crm');\n`))).toBe('it kills, restarts or adds processes');
    }
  });
});

/**
 * A test pool of this test's own: what it starts, only this test uses. Its systems are the pool's
 * real launcher (scripts/system.ts: the same processes, ports, kills, restarts and added gateways)
 * running a stand-in for each service — a process answering /healthz as the service does, the
 * gateway's only while every subgraph answers (test/fixtures/healthz-service.ts) — so that checking
 * the pool's bookkeeping costs a few processes, not the CPU of two whole systems.
 */
function poolOfThisTest() {
  return startTestPool({
    repoRoot, mongoUrl: process.env.MONGO_URL!, redisUrl: process.env.REDIS_URL!, logDir: path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'logs'),
    env: { SMTP_URL: process.env.SMTP_URL!, LOG_LEVEL: 'warn' }, peppolJar: process.env.CUADRA_PEPPOL_VALIDATOR!, chromium: chromiumPath(),
    serviceEntry: () => path.join(repoRoot, 'test', 'fixtures', 'healthz-service.ts'),
  });
}

describe('a system lent to a file of its own', () => {
  it('comes back whole to the next file with the same settings: the subgraph it killed started again, the gateway it added stopped', () => inPoolOfThisTest(async (pool, pids) => {
    // A pool of this test's own: no other file can borrow the system between the two files here.
    const lend = (file: string) => askTestPool<ExclusiveSystemInfo>('exclusive', { root: repoRoot, env: OWN_SYSTEM_SETTINGS, file }, pool.url);
    const first = await lend('first.test.ts');
    pids.push(first.gateway.pid, ...Object.values(first.subgraphs).map((s) => s.pid));
    const added = await askTestPool<{ url: string; pid: number }>('exclusive/another-gateway', { lease: first.lease }, pool.url);
    pids.push(added.pid);
    expect((await fetch(`${added.url}/healthz`)).status).toBe(200);
    await askTestPool('exclusive/kill', { lease: first.lease, name: 'crm' }, pool.url);
    await expect(fetch(`${first.subgraphs.crm.url}/healthz`)).rejects.toThrow();
    await askTestPool('exclusive/release', { lease: first.lease, keep: true }, pool.url);
    // The lease let go of controls nothing any more.
    await expect(askTestPool('exclusive/kill', { lease: first.lease, name: 'gateway' }, pool.url)).rejects.toThrow(/no system is lent/);

    const next = await lend('next.test.ts');
    expect([next.gatewayUrl, next.dbPrefix]).toEqual([first.gatewayUrl, first.dbPrefix]);
    expect(next.lease).not.toBe(first.lease);
    expect(next.sourceAddress).not.toBe(first.sourceAddress);
    expect(next.subgraphs.crm.pid).not.toBe(first.subgraphs.crm.pid);
    pids.push(next.subgraphs.crm.pid);
    expect(await (await fetch(`${next.gatewayUrl}/healthz`)).json()).toMatchObject({ status: 'ok', subgraphs: { crm: 'ok' } });
    await expect(fetch(`${added.url}/healthz`)).rejects.toThrow();
    await askTestPool('exclusive/release', { lease: next.lease, keep: true }, pool.url);
    expect(pool.timings().map((t) => [t.kind, t.label])).toEqual([['own system', 'first.test.ts'], ['thaw', 'next.test.ts'], ['own system, lent again', 'next.test.ts']]);
  }), 60_000);
});

/**
 * Runs `body` with a pool of this test's own, stops the pool, and checks that no process whose id the
 * test put in `pids` is left running.
 */
async function inPoolOfThisTest(body: (pool: TestPool, pids: number[]) => Promise<void>): Promise<void> {
  const pool = await poolOfThisTest();
  const pids: number[] = [];
  try {
    await body(pool, pids);
  } finally {
    await pool.stop();
  }
  expect(pids.filter(isAlive)).toEqual([]);
}

/** Whether a process of this id still runs. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a shared system that died', () => {
  it('is not handed on: the next file gets a new, healthy system; the pool stops everything it started', () => inPoolOfThisTest(async (pool, pids) => {
    const first = await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url);
    expect((await fetch(`${first.gatewayUrl}/healthz`)).status).toBe(200);
    expect((await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url)).gatewayUrl).toBe(first.gatewayUrl);
    pids.push(first.gateway.pid, ...Object.values(first.subgraphs).map((s) => s.pid));
    // crm crashes (a process of this test's own pool: ours to kill).
    process.kill(first.subgraphs.crm.pid, 'SIGKILL');
    const next = await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url);
    pids.push(next.gateway.pid, ...Object.values(next.subgraphs).map((s) => s.pid));
    expect(next.gatewayUrl).not.toBe(first.gatewayUrl);
    expect(next.dbPrefix).not.toBe(first.dbPrefix);
    const health = await fetch(`${next.gatewayUrl}/healthz`);
    expect(await health.json()).toMatchObject({ status: 'ok', subgraphs: { crm: 'ok' } });
    // The broken one was stopped, not left behind.
    await expect(fetch(`${first.gatewayUrl}/healthz`)).rejects.toThrow();
    expect(pool.timings().filter((t) => t.kind === 'shared system').map((t) => t.label)).toEqual(['worker w', 'worker w']);
  }), 60_000);
});

describe('the systems once the last system test file has ended', () => {
  it('are stopped, shared and idle lent ones alike (the module tests after them use none); a late ask gets a new one', () => inPoolOfThisTest(async (pool, pids) => {
    const shared = await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url);
    const lent = await askTestPool<ExclusiveSystemInfo>('exclusive', { root: repoRoot, env: OWN_SYSTEM_SETTINGS, file: 'crash.test.ts' }, pool.url);
    await askTestPool('exclusive/release', { lease: lent.lease, keep: true }, pool.url);
    for (const s of [shared, lent]) pids.push(s.gateway.pid, ...Object.values(s.subgraphs).map((p) => p.pid));
    expect(pids.filter(isAlive)).toEqual(pids);
    // What scripts/test-reporter.ts asks when vitest's last system test file ends.
    expect(await askTestPool('systems/done', {}, pool.url)).toEqual({ stopped: 2 });
    await vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 20_000, interval: 100 });
    const late = await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url);
    expect(late.gatewayUrl).not.toBe(shared.gatewayUrl);
    expect((await fetch(`${late.gatewayUrl}/healthz`)).status).toBe(200);
    pids.push(late.gateway.pid);
  }), 60_000);
});

/** A process's state letter from /proc (`T`: stopped by a signal, as a frozen system's processes are). */
function processState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0];
}

describe('a system no file is using', () => {
  it('is frozen (its processes stopped) until it is handed out again, then answers as before: a shared one once its file lets go or its worker takes a lent one, a lent one once it is put right', () => inPoolOfThisTest(async (pool, pids) => {
    const processesOf = (s: SharedSystemInfo) => [s.gateway.pid, ...Object.values(s.subgraphs).map((p) => p.pid)];
    const states = (s: SharedSystemInfo) => [...new Set(processesOf(s).map(processState))];
    const shared = await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url);
    pids.push(...processesOf(shared));
    expect(states(shared)).not.toContain('T');
    // The file lets go (test/helpers/system.ts `stop()`): every process of the system stops.
    await askTestPool('system/release', { worker: 'w' }, pool.url);
    // (A signal reaches a process running on the other core a moment later.)
    const frozen = (s: SharedSystemInfo) => vi.waitFor(() => expect(states(s)).toEqual(['T']), { timeout: 20_000, interval: 50 });
    await frozen(shared);
    // The worker's next file: the same system, running and healthy.
    const again = await askTestPool<SharedSystemInfo>('system', { worker: 'w', root: repoRoot }, pool.url);
    expect(again.gatewayUrl).toBe(shared.gatewayUrl);
    expect(states(shared)).not.toContain('T');
    expect((await fetch(`${again.gatewayUrl}/healthz`)).status).toBe(200);

    // The worker's next file takes a lent system: the shared one waits frozen, the lent one runs.
    const lent = await askTestPool<ExclusiveSystemInfo>('exclusive', { root: repoRoot, env: OWN_SYSTEM_SETTINGS, file: 'crash.test.ts', worker: 'w' }, pool.url);
    pids.push(...processesOf(lent));
    await frozen(shared);
    expect(states(lent)).not.toContain('T');
    // Given back: put right, then frozen until the next file with these settings.
    await askTestPool('exclusive/release', { lease: lent.lease, keep: true }, pool.url);
    await frozen(lent);
    const lentAgain = await askTestPool<ExclusiveSystemInfo>('exclusive', { root: repoRoot, env: OWN_SYSTEM_SETTINGS, file: 'crash-next.test.ts', worker: 'w' }, pool.url);
    expect(lentAgain.gatewayUrl).toBe(lent.gatewayUrl);
    expect(states(lent)).not.toContain('T');
    expect((await fetch(`${lentAgain.gatewayUrl}/healthz`)).status).toBe(200);
    await askTestPool('exclusive/release', { lease: lentAgain.lease, keep: true }, pool.url);
    await frozen(lent);
    // Frozen systems are stopped with the pool all the same (inPoolOfThisTest: no process left).
    // Each hand-over of a frozen system timed (the thaw until /healthz answers), none replaced.
    expect(pool.timings().map((t) => t.kind)).toEqual(['shared system', 'thaw', 'own system', 'thaw', 'own system, lent again']);
  }), 60_000);
});
