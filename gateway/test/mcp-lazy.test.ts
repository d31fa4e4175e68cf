import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { createLogger } from '@cuadra/shared';
import express, { Router } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { sendRefusal } from '../src/http.ts';
import { lazyMcpRouter } from '../src/mcp/lazy.ts';

// /mcp's server code is loaded at the first MCP request (gateway/src/mcp/lazy.ts). A load that
// fails once — a file being replaced during a deploy, too many open files under a burst — must
// fail that request only: Node loads the module again on the next import(), so a route that kept
// the failed load would answer 500 to every MCP client until the gateway restarted, while
// /healthz said all was well.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server ? server.close(r) : r(undefined));
  server = undefined;
});

const log = createLogger('test', 'silent');

/** The gateway's /mcp mount and its error handler, on a real HTTP server; `load` fails its first `failures` calls. */
async function gatewayWithMcp(failures: number): Promise<{ url: string; loads: () => number }> {
  let loads = 0;
  const app = express();
  const deps = { publicUrl: 'http://127.0.0.1', log } as unknown as Parameters<typeof lazyMcpRouter>[0];
  app.use(lazyMcpRouter(deps, async () => {
    loads++;
    if (loads <= failures) throw Object.assign(new Error('EMFILE: too many open files, open \'router.ts\''), { code: 'EMFILE' });
    const router = Router();
    router.post('/mcp', (_req, res) => { res.json({ served: true }); });
    return router;
  }));
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => sendRefusal(res, err, { publicUrl: 'http://127.0.0.1', log }));
  server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, loads: () => loads };
}

describe('/mcp loaded at its first request', () => {
  it('a failed load answers that request 500 internal, without the error\'s text, and the next request loads it again', async () => {
    const { url, loads } = await gatewayWithMcp(1);
    const first = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(first.status).toBe(500);
    const text = await first.text();
    expect(JSON.parse(text).code).toBe('internal');
    expect(text).not.toContain('EMFILE');
    expect(text).not.toContain('router.ts');
    const second = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ served: true });
    expect(loads()).toBe(2);
  });

  it('loads once for many first requests at the same time, and not again after', async () => {
    const { url, loads } = await gatewayWithMcp(0);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(url, { method: 'POST', body: '{}' }).then((r) => r.status)));
    expect(answers).toEqual(Array(20).fill(200));
    expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(loads()).toBe(1);
  });
});
