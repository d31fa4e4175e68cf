// The launcher waits for the process it started, not for whatever answers on the port it chose: a
// port found free can be taken by another process before the service binds it. Before, any 200 on
// the port counted — a test then got a gateway URL answered by another system's subgraph (seen in
// a whole run: test/shared-systems.test.ts, a /healthz without its `subgraphs` field).
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort, repoRoot } from '../scripts/infra.ts';
import { spawnService, waitHealthy } from '../scripts/system.ts';

const logDir = mkdtempSync(path.join(tmpdir(), 'system-start-'));
const entry = path.join(repoRoot, 'test', 'fixtures', 'healthz-service.ts');
afterAll(() => rmSync(logDir, { recursive: true, force: true }));

it('does not take another process answering on the chosen port for the service: it waits for its own, and says when that one could not bind', async () => {
  const port = await freePort();
  // Another process takes the port first, and answers every request 200.
  const squatter = http.createServer((_req, res) => res.end('{"status":"ok","subgraph":"crm"}'));
  await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', () => r()));
  try {
    const child = spawnService('late', entry, { PORT: String(port) }, logDir);
    await expect(waitHealthy(`http://127.0.0.1:${port}/healthz`, child, 'late', path.join(logDir, 'late.log'), 15_000)).rejects.toThrow(/EADDRINUSE/);
  } finally {
    await new Promise((r) => squatter.close(r));
  }
});

it('counts the answer of the process it started', async () => {
  const port = await freePort();
  const child = spawnService('own', entry, { PORT: String(port) }, logDir);
  try {
    await waitHealthy(`http://127.0.0.1:${port}/healthz`, child, 'own', path.join(logDir, 'own.log'), 15_000);
  } finally {
    child.kill('SIGKILL');
  }
});

// Issue 33 (ARCHITECTURE.md, "A service's memory"): every service starts with V8's heap bound, and a
// NODE_OPTIONS of the caller's still counts (given after it). V8's limit is the old space plus three
// semi-spaces: 1,024 + 3 × 16 MB; without the bound it is sized from the machine (4,288 MB here).
async function heapLimitOf(name: string, env: Record<string, string>): Promise<number> {
  const child = spawnService(name, path.join(repoRoot, 'test', 'fixtures', 'heap-limit.ts'), env, logDir);
  await new Promise((r) => child.once('close', r));
  for (let i = 0; i < 100; i++) {
    const m = /\{"heapLimitMb":([\d.]+)\}/.exec(existsSync(path.join(logDir, `${name}.log`)) ? readFileSync(path.join(logDir, `${name}.log`), 'utf8') : '');
    if (m) return Number(m[1]);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} printed no heap limit`);
}

it('starts every service with the heap bound (SERVICE_NODE_OPTIONS), a NODE_OPTIONS of its own given after it', async () => {
  expect(await heapLimitOf('bounded', {})).toBe(1024 + 3 * 16);
  expect(await heapLimitOf('overridden', { NODE_OPTIONS: '--max-old-space-size=2048' })).toBe(2048 + 3 * 16);
});
