import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FairShare } from '@cuadra/shared';
import type { Gateway } from '../src/server.ts';
import { startInProcessGateway } from './helpers/gateway.ts';

// Issue 31, finding 13: `POST /app/members` and `POST /app/ledger` answered 404 — a hand-kept table
// of methods said POST, and no route served it. The gateway now reads the table from its routes;
// here every route the app has is asked with every method, and none answers 404 for a method it
// does not serve: 405 with `Allow` naming exactly the methods its routes serve.

let gateway: Gateway;
let url: string;
let close: (() => Promise<void>) | undefined;
let ledgerOf: (workspace: string) => Promise<string[]>;
// The gateway's share of each workspace, held by the test (one call at a time: a second one waits).
const share = new FairShare({ slots: 1, queue: 8, waitMs: 60_000 });

beforeAll(async () => {
  const started = await startInProcessGateway('methods', { fairShare: share });
  ({ gateway, url, close } = started);
  ledgerOf = async (workspace) => (await started.governance.ledger.list(workspace, { limit: 50 })).rows.map((e) => e.tool);
});
afterAll(async () => {
  await close?.();
});

interface Listed { path: string | RegExp; methods?: string[]; router?: { listRoutes(): Listed[] } }

/** Every route of the app as express lists it, with a concrete path for it (`:id` → `x`), walked here on its own. */
function routes(): { path: string; methods: Set<string> }[] {
  const byPath = new Map<string, Set<string>>();
  const walk = (list: Listed[], prefix: string) => {
    for (const r of list) {
      if (r.router) walk(r.router.listRoutes(), typeof r.path === 'string' && r.path !== '/' ? prefix + r.path : prefix);
      else if (typeof r.path === 'string' && r.methods?.length) {
        const concrete = prefix + r.path.replace(/:[A-Za-z_]+/g, 'x');
        const set = byPath.get(concrete) ?? new Set<string>();
        for (const m of r.methods) set.add(m);
        byPath.set(concrete, set);
      } else if (r.path instanceof RegExp && r.path.source.includes('tools')) {
        byPath.set('/v1/tools/parties.list:invoke', new Set(r.methods));
      }
    }
  };
  walk((gateway.app.router as unknown as { listRoutes(): Listed[] }).listRoutes(), '');
  return [...byPath].map(([path, methods]) => ({ path, methods }));
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

describe('405 for every path the gateway serves, read from its routes', () => {
  it('lists the pages, the REST, OAuth, MCP and graph routes', () => {
    const paths = routes().map((r) => r.path);
    expect(paths).toEqual(expect.arrayContaining(['/app/members', '/app/ledger', '/app/keys', '/app/members/invite', '/dashboards/x', '/mcp', '/graphql', '/oauth/token', '/v1/tools', '/v1/tools/parties.list:invoke']));
    expect(paths.length).toBeGreaterThan(30);
  });

  it('POST /app/members and POST /app/ledger answer 405 with Allow: GET, HEAD', async () => {
    for (const path of ['/app/members', '/app/ledger']) {
      const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
    }
  });

  it('no route answers 404 for a method it does not serve: 405 with Allow naming exactly what its routes serve', async () => {
    const checked: string[] = [];
    for (const { path, methods } of routes()) {
      if (methods.has('GET')) methods.add('HEAD');
      for (const method of METHODS) {
        if (methods.has(method)) continue;
        const res = await fetch(`${url}${path}`, { method });
        await res.arrayBuffer();
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 405 });
        expect(res.headers.get('allow')!.split(', ').sort(), `${method} ${path}`).toEqual([...methods].sort());
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked).toContain('POST /app/members');
    expect(checked.length).toBeGreaterThan(100);
  });

  it('a method a route serves is never refused 405', async () => {
    for (const { path, methods } of routes()) {
      for (const method of methods) {
        if (method === 'GET' && (path === '/v1/events' || path === '/mcp')) continue; // streams: asked without a credential below
        const res = await fetch(`${url}${path}`, { method, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
        await res.arrayBuffer();
        expect({ path, method, status: res.status === 405 ? 405 : 'served' }).toEqual({ path, method, status: 'served' });
      }
    }
    for (const path of ['/v1/events', '/mcp']) expect((await fetch(`${url}${path}`)).status).toBe(401);
  });
});

describe('a REST caller who hangs up while waiting for its fair-share slot', () => {
  /** Waits (bounded) until `ok()` holds; answers whether it did. */
  async function until(ok: () => boolean, ms = 2_000): Promise<boolean> {
    const end = Date.now() + ms;
    while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    return ok();
  }

  it('an answered call withdraws nothing when its response closes: no abort (issue 33, the hop: one per call made a DOMException)', async () => {
    const { api_key: key } = await gateway.identity.createWorkspace({ name: 'Respondida SAS', ownerEmail: `answered-${Date.now()}@example.com` });
    // node:http, not fetch: the client in this process then aborts nothing of its own.
    const invoke = () => new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ name: 'invoices.post' });
      const req = request(`${url}/v1/tools/tools.describe:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(body);
    });
    const aborts = vi.spyOn(AbortController.prototype, 'abort');
    try {
      for (let i = 0; i < 3; i++) expect(await invoke()).toBe(200);
      // The server's responses close (and their listeners run) a turn or two after the client has the answer.
      await new Promise((r) => setTimeout(r, 50));
      expect(aborts).not.toHaveBeenCalled();
    } finally {
      aborts.mockRestore();
    }
  });

  it('gives up its turn: the call never runs (no ledger entry) and no slot is taken for it, now or later', async () => {
    const { workspace_id: ws, api_key: key } = await gateway.identity.createWorkspace({ name: 'Colgó SAS', ownerEmail: `hangup-${Date.now()}@example.com` });
    const invoke = (tool: string, input: Record<string, unknown>, signal?: AbortSignal) => fetch(`${url}/v1/tools/${tool}:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(input), signal,
    });
    // The workspace's one slot is taken: the next call waits for it.
    const held = await share.acquire(ws);
    const hangUp = new AbortController();
    const abandoned = invoke('tools.describe', { name: 'invoices.post' }, hangUp.signal).catch((err: Error) => err);
    expect(await until(() => share.load(ws).waiting === 1)).toBe(true);
    hangUp.abort();
    expect(await abandoned).toMatchObject({ name: 'AbortError' });
    // Its place in line is given up at once (before: it kept it and ran when the slot came back).
    expect(await until(() => share.load(ws).waiting === 0)).toBe(true);
    held();
    expect(share.busyWorkspaces).toBe(0);
    // Nothing of it ran: after the slot came back and one more call ran, the ledger holds that call only.
    expect((await invoke('tools.describe', { name: 'invoices.post' })).status).toBe(200);
    expect(await ledgerOf(ws)).toEqual(['tools.describe']);
    expect(share.busyWorkspaces).toBe(0);
  });
});
