import { annotationsFor, type Risk } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublicTool } from '../src/catalog.ts';
import { scoreTool, searchTools } from '../src/mcp/catalogTools.ts';
import { originAllowed } from '../src/mcp/router.ts';
import { startInProcessGateway } from './helpers/gateway.ts';

function tool(name: string, risk: Risk, description: string): PublicTool {
  return { name, module: name.split('.')[0], risk, scope: risk === 'read' ? 'tools:read' : 'tools', description, input_schema: { type: 'object' }, annotations: annotationsFor(risk) };
}

const tools = [
  tool('invoices.create', 'write', 'Create a draft invoice for a customer, with lines priced from items or given by hand. Totals are computed.'),
  tool('invoices.list', 'read', 'List the invoices of the workspace, newest first.'),
  tool('invoices.get', 'read', 'One invoice with its lines.'),
  tool('invoices.recurring_create', 'write', 'Schedule a recurring invoice for a customer: the lines, every N weeks or months until an optional end date.'),
  tool('parties.create', 'write', 'Create a customer or vendor.'),
  tool('parties.list', 'read', 'List customers and vendors; filter by kind or search by name.'),
  tool('employees.list', 'read', 'List the employees of the workspace.'),
  tool('payroll.run', 'write', 'Run the payroll of a period for every active employee.'),
];

const names = (query: string, limit = 10) => searchTools(tools, query, limit).hits.map((h) => h.name);

describe('tools.search ranking', () => {
  it('puts the tool whose name says the task first, whatever the word order or plural', () => {
    expect(names('create invoice')[0]).toBe('invoices.create');
    expect(names('invoice create')[0]).toBe('invoices.create');
    expect(names('make an invoice for a customer')[0]).toBe('invoices.create');
    expect(names('list customers')[0]).toBe('parties.list');
    expect(names('invoices.get')[0]).toBe('invoices.get');
  });

  it('finds by description words when the name does not say it', () => {
    expect(names('vendor')).toEqual(expect.arrayContaining(['parties.create', 'parties.list']));
    expect(names('payroll employees').slice(0, 2).sort()).toEqual(['employees.list', 'payroll.run']);
  });

  it('returns nothing for words that match nothing, and honours the limit', () => {
    expect(names('teleport')).toEqual([]);
    expect(names('list', 2)).toHaveLength(2);
    expect(searchTools(tools, 'list', 2).total).toBeGreaterThan(2);
  });

  it('gives compact entries: name, module, risk and the first sentence', () => {
    const [hit] = searchTools(tools, 'create invoice', 1).hits;
    expect(hit).toEqual({ name: 'invoices.create', module: 'invoices', risk: 'write', summary: 'Create a draft invoice for a customer, with lines priced from items or given by hand.' });
  });

  it('scores an exact name above everything', () => {
    expect(scoreTool(tools[1], 'invoices.list')).toBeGreaterThan(scoreTool(tools[0], 'invoices.list'));
  });
});

describe('originAllowed', () => {
  const publicUrl = 'https://api.cuadra.example';
  it('allows no Origin (programs), the service\'s own origin and loopback', () => {
    expect(originAllowed(undefined, publicUrl)).toBe(true);
    expect(originAllowed('https://api.cuadra.example', publicUrl)).toBe(true);
    expect(originAllowed('http://localhost:6274', publicUrl)).toBe(true);
    expect(originAllowed('http://127.0.0.1:3000', publicUrl)).toBe(true);
    expect(originAllowed('http://[::1]:3000', publicUrl)).toBe(true);
  });

  it('refuses other origins, look-alikes, the opaque origin and other schemes', () => {
    expect(originAllowed('http://api.cuadra.example', publicUrl)).toBe(false);
    expect(originAllowed('https://api.cuadra.example.evil.com', publicUrl)).toBe(false);
    expect(originAllowed('https://evil.example', publicUrl)).toBe(false);
    expect(originAllowed('http://localhost.evil.example', publicUrl)).toBe(false);
    expect(originAllowed('null', publicUrl)).toBe(false);
    expect(originAllowed('file://localhost', publicUrl)).toBe(false);
  });
});

describe('McpSessions', () => {
  it('keeps a session to its credential and closes the least recently used beyond the limits', async () => {
    const { McpSessions } = await import('../src/mcp/sessions.ts');
    const { Server } = await import('@modelcontextprotocol/server');
    const sessions = new McpSessions({ perCredential: 2, total: 3 });
    const ids: string[] = [];
    async function openOne(credential: string): Promise<string> {
      const transport = await sessions.open(credential, new Server({ name: 't', version: '1' }, { capabilities: {} }));
      const res = await transport.handleRequest(new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      }));
      await res.text();
      ids.push(transport.sessionId!);
      return transport.sessionId!;
    }
    try {
      const a1 = await openOne('key_a');
      expect(sessions.find(a1, 'key_b')).toBeUndefined();
      expect(sessions.find(a1, 'key_a')).toBeDefined();
      const a2 = await openOne('key_a');
      const a3 = await openOne('key_a'); // a1 goes: two per credential
      expect(sessions.find(a1, 'key_a')).toBeUndefined();
      expect(sessions.find(a2, 'key_a')).toBeDefined();
      await openOne('key_b');
      await openOne('key_c'); // three in all: the least recently used (a3, untouched since opened) goes
      expect(sessions.size).toBe(3);
      expect(sessions.find(a3, 'key_a')).toBeUndefined();
      expect(sessions.find(a2, 'key_a')).toBeDefined();
    } finally {
      await sessions.closeAll();
    }
  });
});

describe('tools.search and tools.describe as declared tools (for the gateway\'s own tool owner)', () => {
  it('register with the gateway\'s owner and answer from services.catalog, seeing only what the caller reaches', async () => {
    const { createRegistry, catalogEntry, defineTool } = await import('@cuadra/shared');
    const { Catalog } = await import('../src/catalog.ts');
    const { searchTool, describeTool } = await import('../src/mcp/catalogTools.ts');
    const registry = createRegistry('gateway', ['tools'], [searchTool, describeTool]);
    expect(registry.get('tools.search')).toBeDefined();
    const declared = (name: string, risk: Risk, description: string) =>
      catalogEntry(defineTool({ name, risk, description, input: { type: 'object', additionalProperties: false, properties: {} }, handler: async () => ({}) }), name.split('.')[0]);
    const catalog = new Catalog([declared('invoices.create', 'write', 'Create a draft invoice.'), declared('invoices.list', 'read', 'List invoices.')]);
    const viewer = { workspace: 'ws_1', role: 'viewer', actor: { type: 'api_key' as const, id: 'k' }, credential_id: 'k', scopes: null, patterns: null };
    const ctx = { principal: viewer, workspace: 'ws_1', services: { catalog } } as never;
    const found = await searchTool.handler({ query: 'invoice' }, ctx);
    expect((found.tools as { name: string }[]).map((t) => t.name)).toEqual(['invoices.list']);
    await expect(describeTool.handler({ name: 'invoices.create' }, ctx)).rejects.toMatchObject({ code: 'not_found' });
    expect((await describeTool.handler({ name: 'invoices.list' }, ctx)).tool).toMatchObject({ name: 'invoices.list', risk: 'read' });
  });
});

describe('/mcp (and /graphql) behind the same gates as REST', () => {
  // A gateway in this process on the test run's MongoDB-protocol server and Redis; no subgraph is
  // needed (initialize, tools/list and the catalog tools are the gateway's own). Quota: 4 per minute.
  const LIMIT = 4;
  let gateway: Awaited<ReturnType<typeof import('../src/server.ts').createGateway>>;
  let url: string;
  let close: () => Promise<void>;
  /** The Redis keys the gateway GETs (its own client, observed: the API-key cache is `cred:<hash>`). */
  const gets: string[] = [];

  beforeAll(async () => {
    const started = await startInProcessGateway('mcp', {
      // As the environment gives it.
      env: { RATE_LIMIT_PER_CREDENTIAL: `${LIMIT}/60` },
      // Every read of a credential's shared cache entry: a GET of it, or a script given it as its first key
      // (the limiter's count-if-unchanged reads it inside Redis: one round trip for the check and the count).
      redis: (redis) => {
        const send = redis.sendCommand.bind(redis) as (cmd: { name: string; args: unknown[] }, ...rest: unknown[]) => unknown;
        (redis as unknown as { sendCommand: typeof send }).sendCommand = (cmd, ...rest) => {
          const key = cmd.name === 'get' ? cmd.args[0] : cmd.name === 'evalsha' || cmd.name === 'eval' ? cmd.args[2] : undefined;
          if (key !== undefined) gets.push(String(key));
          return send(cmd, ...rest);
        };
      },
    });
    ({ gateway, url } = started);
    close = started.close;
  });
  afterAll(async () => {
    await close?.();
  });

  /** One JSON-RPC POST to /mcp (protocol 2025-11-25): its HTTP status, headers and JSON (or SSE data) body. */
  async function rpc(key: string | null, message: Record<string, unknown>, session?: string) {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    if (key) headers.authorization = `Bearer ${key}`;
    if (session) headers['mcp-session-id'] = session;
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
    const text = await res.text();
    const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
    let body: any = null;
    try {
      body = data ? JSON.parse(data) : null;
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body };
  }

  async function open(key: string) {
    const init = await rpc(key, { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'gates', version: '1' } } });
    expect(init.status).toBe(200);
    return { init, session: init.headers.get('mcp-session-id')! };
  }

  it('needs a credential for every method (401 with the OAuth challenge)', async () => {
    for (const method of ['initialize', 'tools/list', 'tools/call', 'ping']) {
      const got = await rpc(null, { id: 1, method, params: {} });
      expect({ method, status: got.status }).toEqual({ method, status: 401 });
      expect(got.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    }
    expect((await rpc('nk_live_not_a_key', { id: 1, method: 'tools/list' })).status).toBe(401);
  });

  it('counts every request once against the credential\'s limit: initialize, tools/list, notifications, tools/call; over it, 429 rate_limited', async () => {
    const { workspace_id: workspace } = await gateway.identity.createWorkspace({ name: 'Límites MCP SAS', ownerEmail: `mcp-${Date.now()}@example.com` });
    const { api_key: key } = await gateway.identity.createApiKey({ workspace, name: 'mcp', role: 'admin' });
    const { init, session } = await open(key); // 1
    // Every answer carries the RateLimit headers, as REST's do.
    expect(init.headers.get('ratelimit')).toMatch(new RegExp(`;r=${LIMIT - 1};`));
    expect(init.headers.get('ratelimit-policy')).toBeTruthy();
    expect((await rpc(key, { method: 'notifications/initialized' }, session)).status).toBe(202); // 2
    const list = await rpc(key, { id: 2, method: 'tools/list' }, session); // 3
    expect(list.status).toBe(200);
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toContain('tools.search');
    expect(list.headers.get('ratelimit')).toMatch(/;r=1;/);
    // A tools/call spends the request's count, not a second one.
    const found = await rpc(key, { id: 3, method: 'tools/call', params: { name: 'tools.search', arguments: { query: 'invoice' } } }, session); // 4
    expect(found.status).toBe(200);
    expect(found.body.result.isError).toBeFalsy();
    expect(found.headers.get('ratelimit')).toMatch(/;r=0;/);
    // Over the limit: tools/list is refused like a REST call (429, Retry-After, the contract's body)…
    const refused = await rpc(key, { id: 4, method: 'tools/list' }, session);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: expect.any(String), code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/;r=0;/);
    expect((await rpc(key, { id: 5, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'gates', version: '1' } } })).status).toBe(429);
    // …and a tools/call answers the refusal as its tool result (CONTRACT.md §7).
    const call = await rpc(key, { id: 6, method: 'tools/call', params: { name: 'tools.search', arguments: { query: 'invoice' } } }, session);
    expect(call.status).toBe(200);
    expect(call.body.result).toMatchObject({ isError: true, structuredContent: { code: 'rate_limited' } });
    // REST shares the same count.
    const rest = await fetch(`${url}/v1/tools/tools.search:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"query":"x"}' });
    expect(rest.status).toBe(429);
    // Listing the tools over REST is counted and refused the same way (as MCP's tools/list).
    const listed = await fetch(`${url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(429);
    expect(await listed.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(listed.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(listed.headers.get('ratelimit')).toMatch(/;r=0;/);
  });

  it('looks a credential up once per request on /graphql and /mcp, and refuses it on the next request once revoked', async () => {
    const { workspace_id: workspace } = await gateway.identity.createWorkspace({ name: 'Una Consulta SAS', ownerEmail: `once-${Date.now()}@example.com` });
    const { id, api_key: key } = await gateway.identity.createApiKey({ workspace, name: 'once', role: 'admin' });
    const lookups = async (request: () => Promise<unknown>) => {
      const before = gets.filter((k) => k.startsWith('cred:')).length;
      await request();
      return gets.filter((k) => k.startsWith('cred:')).length - before;
    };
    const graphql = (query: string, variables: Record<string, unknown> = {}) => fetch(`${url}/graphql`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }),
    });
    const mutation = 'mutation M($t: String!, $i: JSON!) { invokeCrmTool(tool: $t, input: $i) }';
    // A tool mutation runs the whole pipeline (crm is not running here: the answer is `unavailable`, after every gate).
    let answer: any;
    expect(await lookups(async () => {
      answer = await (await graphql(mutation, { t: 'parties.list', i: {} })).json();
    })).toBe(1);
    expect(answer.data.invokeCrmTool).toMatchObject({ status: 503, body: { code: 'unavailable' } });
    // An MCP tools/call: the router's lookup serves the call too.
    const { session } = await open(key);
    expect(await lookups(async () => {
      answer = await rpc(key, { id: 2, method: 'tools/call', params: { name: 'tools.search', arguments: { query: 'invoice' } } }, session);
    })).toBe(1);
    expect(answer.body.result.isError).toBeFalsy();
    // Revoked: refused on the very next request, on both surfaces.
    expect(await gateway.identity.revokeApiKey(workspace, id)).toBe(true);
    const refused = await graphql(mutation, { t: 'parties.list', i: {} });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'unauthenticated' });
    expect((await rpc(key, { id: 3, method: 'tools/call', params: { name: 'tools.search', arguments: { query: 'invoice' } } }, session)).status).toBe(401);
  });

  it('refuses an API key once it has expired, though this gateway checked it before and its shared cache entry still holds', async () => {
    const { workspace_id: workspace } = await gateway.identity.createWorkspace({ name: 'Vence Pronto SAS', ownerEmail: `expiry-${Date.now()}@example.com` });
    const { api_key: key } = await gateway.identity.createApiKey({ workspace, name: 'short', role: 'admin', expiresAt: new Date(Date.now() + 1_500) });
    const call = () => fetch(`${url}/v1/tools/tools.search:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"query":"x"}' });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200); // the one-round-trip path: checked before, entry unchanged
    await new Promise((r) => setTimeout(r, 1_700));
    const refused = await call();
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'unauthenticated', error: expect.stringMatching(/expired/) });
  });
});
