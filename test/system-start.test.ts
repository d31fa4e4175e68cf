// The launcher waits for the process it started, not for whatever answers on the port it chose: a
// port found free can be taken by another process before the service binds it. Before, any 200 on
// the port counted — a test then got a gateway URL answered by another system's subgraph (seen in
// a whole run: test/shared-systems.test.ts, a /healthz without its `subgraphs` field).
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
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
