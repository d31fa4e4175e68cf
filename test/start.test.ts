import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, repoRoot } from '../scripts/infra.ts';

// `npm start` itself (scripts/start.ts), as a person runs it: its own H2-backed server and Redis,
// its data under a data folder, Ctrl-C to stop, and the same data after a second start.
const dataDir = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), `start-${randomBytes(3).toString('hex')}`);
// Subgraphs on free ports: the tests pass while a person's own `npm start` holds 4101–4105.
const env: NodeJS.ProcessEnv = { ...process.env, CUADRA_DATA_DIR: dataDir, LOG_LEVEL: 'warn', CUADRA_SUBGRAPH_PORTS: 'free' };
delete env.MONGO_URL;
delete env.REDIS_URL;

let running: ChildProcess | undefined;

function start(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['scripts/start.ts'], { cwd: repoRoot, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  running = child;
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${output}`)), 150_000);
    child.stdout!.on('data', () => {
      if (output.includes('Cuadra is running at')) {
        clearTimeout(timer);
        resolve({ child, output: () => output });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

afterAll(async () => {
  if (running && running.exitCode === null) await stop(running);
});

describe('npm start', () => {
  it('runs the whole system, stops cleanly on Ctrl-C, and keeps data across a restart', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const first = await start(port);
    const run = JSON.parse(readFileSync(path.join(dataDir, 'run.json'), 'utf8'));
    expect(run.gateway_url).toBe(base);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    // The operator command finds the running system through the data folder.
    const line = execFileSync(process.execPath, ['scripts/cuadra.ts', 'workspace', 'create', '--name', 'Persistente SAS', '--owner-email', 'p@example.com'], { cwd: repoRoot, env, encoding: 'utf8' });
    const { api_key: key } = JSON.parse(line);
    const created = await fetch(`${base}/v1/tools/parties.create:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Antes del reinicio', kind: 'customer' }),
    });
    expect(created.status).toBe(200);
    const partyId = ((await created.json()) as { output: { party: { id: string } } }).output.party.id;

    expect(await stop(first.child)).toBe(0);
    expect(first.output()).toContain('stopped');
    expect(existsSync(path.join(dataDir, 'run.json'))).toBe(false);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();

    const second = await start(port);
    // Nothing changed since the first start's build: the second composes nothing (gateway/generated/inputs.sha256).
    expect(second.output()).toContain('supergraph unchanged since the last build');
    const got = await fetch(`${base}/v1/tools/parties.get:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: partyId }),
    });
    expect(got.status).toBe(200);
    expect(((await got.json()) as { output: { party: { name: string } } }).output.party.name).toBe('Antes del reinicio');
    expect(await stop(second.child)).toBe(0);
  // Two starts of the whole system on the durable (commit-before-answer) store: slow on a loaded 2-core machine.
  }, 180_000);
});
