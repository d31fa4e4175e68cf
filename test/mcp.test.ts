import {
  Client, InsufficientScopeError, StreamableHTTPClientTransport, UnauthorizedError,
  type OAuthClientMetadata, type OAuthClientProvider, type StoredOAuthClientInformation, type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeThroughForms, peopleOf } from './helpers/oauth.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// /mcp driven by the official MCP client, as an assistant would: both protocol revisions,
// the same catalog and pipeline as REST (CONTRACT.md §7).

type Revision = '2025-11-25' | '2026-07-28';

let sys: TestSystem;
let ownerKey: string;
let workspaceId: string;
const open: Client[] = [];

beforeAll(async () => {
  sys = await startTestSystem('mcp');
  const ws = await sys.workspace('Mcp Andina SAS');
  ownerKey = ws.api_key;
  workspaceId = ws.workspace_id;
});
afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await sys?.stop();
});

// People and the mailbox are shared by every file of the system: addresses no other test uses.
const person = { email: uniqueAddress('lucia@mcp.example'), password: 'una clave larga de verdad' };

/**
 * An assistant's OAuth client provider: registers itself (RFC 7591), and when sent to the
 * authorization page answers it as the person would (login, consent) and keeps the callback.
 */
class AssistantAuth implements OAuthClientProvider {
  #client?: StoredOAuthClientInformation;
  #tokens?: StoredOAuthTokens;
  #verifier = '';
  callback?: URL;
  authorizations = 0;

  get redirectUrl() {
    return 'http://127.0.0.1:47813/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Asistente MCP', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.#tokens = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations++;
    const answer = await authorizeThroughForms(sys.gatewayUrl, url, person);
    expect(answer.status, answer.text).toBe(303);
    this.callback = new URL(answer.location!);
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}


async function connect(revision: Revision, key: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client(
    { name: 'cuadra-test', version: '1.0.0' },
    { versionNegotiation: { mode: revision === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${sys.gatewayUrl}/mcp`), {
    authProvider: { token: async () => key },
    requestInit: { headers },
  });
  await client.connect(transport);
  open.push(client);
  return { client, transport };
}

/** Raw POST to /mcp, for what the client library would not send. */
async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${sys.gatewayUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    // SSE or empty
  }
  return { status: res.status, headers: res.headers, body: json };
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

describe.each(['2025-11-25', '2026-07-28'] as const)('MCP %s', (revision) => {
  it('negotiates the revision: initialize and a session for 2025-11-25, server/discover and no session for 2026-07-28', async () => {
    const { client, transport } = await connect(revision, ownerKey);
    expect(client.getNegotiatedProtocolVersion()).toBe(revision);
    expect(client.getServerVersion()?.name).toBe('cuadra');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    if (revision === '2025-11-25') {
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      await expect(client.ping()).resolves.toBeDefined();
    } else {
      expect(transport.sessionId).toBeUndefined();
      const discovered = await client.discover();
      expect(discovered.supportedVersions).toContain('2026-07-28');
      expect(discovered.capabilities.tools).toBeDefined();
    }
  });

  it('lists exactly what GET /v1/tools lists for the credential, plus the catalog tools, with risk annotations', async () => {
    const { client } = await connect(revision, ownerKey);
    const { tools } = await client.listTools();
    const rest = await sys.fetch('/v1/tools', { key: ownerKey });
    const restNames: string[] = rest.body.tools.map((t: { name: string }) => t.name);
    // The catalog tools are there whether or not the build's catalog (and so REST's listing) carries them yet.
    expect(tools.map((t) => t.name).sort()).toEqual([...new Set([...restNames, 'tools.describe', 'tools.search'])].sort());
    const list = tools.find((t) => t.name === 'invoices.list')!;
    expect(list.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const create = tools.find((t) => t.name === 'parties.create')!;
    expect(create.annotations).toMatchObject({ readOnlyHint: false });
    expect(create.inputSchema).toEqual(rest.body.tools.find((t: { name: string }) => t.name === 'parties.create').input_schema);
  });

  it('runs a listed tool through the pipeline: output as structuredContent', async () => {
    const { client } = await connect(revision, ownerKey);
    const created = await client.callTool({ name: 'parties.create', arguments: { name: `Cliente MCP ${revision}`, kind: 'customer' } });
    expect(created.isError).toBeFalsy();
    const party = (created.structuredContent as { party: { id: string; name: string } }).party;
    expect(party.name).toBe(`Cliente MCP ${revision}`);
    expect(JSON.parse((created.content as { text: string }[])[0].text)).toEqual(created.structuredContent);
    // The same record is there for REST: one pipeline, one workspace.
    const got = await sys.invoke('parties.get', { id: party.id }, ownerKey);
    expect(got.body.output.party.name).toBe(party.name);
  });

  it('renders refusals as tool errors with the contract body, and an unknown tool as -32602', async () => {
    const { client } = await connect(revision, ownerKey);
    const invalid = await client.callTool({ name: 'parties.create', arguments: { kind: 'customer' } });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toEqual({ code: 'invalid_input', error: expect.any(String), field: '/name' });
    const missing = await client.callTool({ name: 'parties.get', arguments: { id: 'pty_doesnotexist' } });
    expect(missing).toMatchObject({ isError: true, structuredContent: { code: 'not_found' } });
    await expect(client.callTool({ name: 'parties.teleport', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('applies the key\'s role and patterns to listing and calling', async () => {
    const narrowed = await sys.key(workspaceId, 'owner', ['parties.%']);
    const { client } = await connect(revision, narrowed.api_key);
    const { tools } = await client.listTools();
    const rest = (await sys.fetch('/v1/tools', { key: narrowed.api_key })).body.tools.map((t: { name: string }) => t.name);
    expect(rest).toContain('parties.create');
    expect(tools.map((t) => t.name).sort()).toEqual(rest.sort());
    expect(tools.every((t) => t.name.startsWith('parties.'))).toBe(true);
    const denied = await client.callTool({ name: 'invoices.list', arguments: {} });
    expect(denied).toMatchObject({ isError: true, structuredContent: { code: 'policy_denied' } });
    const viewer = await sys.key(workspaceId, 'viewer');
    const v = await connect(revision, viewer.api_key);
    expect((await v.client.listTools()).tools.every((t) => t.annotations?.readOnlyHint)).toBe(true);
    expect(await v.client.callTool({ name: 'parties.create', arguments: { name: 'V', kind: 'customer' } })).toMatchObject({ isError: true, structuredContent: { code: 'policy_denied' } });
  });

  it('keeps workspaces apart: another workspace\'s records are not found, its tenant id is refused', async () => {
    const mine = await sys.invoke('parties.create', { name: `Solo mío ${revision}`, kind: 'vendor' }, ownerKey);
    const other = await sys.workspace('Otra Mcp SAS');
    const { client } = await connect(revision, other.api_key);
    const cross = await client.callTool({ name: 'parties.get', arguments: { id: mine.body.output.party.id } });
    expect(cross).toMatchObject({ isError: true, structuredContent: { code: 'not_found' } });
    const listed = await client.callTool({ name: 'parties.list', arguments: {} });
    expect((listed.structuredContent as { rows: unknown[] }).rows).toEqual([]);
    // X-Tenant-Id naming the first workspace: refused before any MCP message is read.
    await expect(connect(revision, other.api_key, { 'x-tenant-id': workspaceId })).rejects.toThrow();
  });

  it('finds tools with tools.search and describes them with tools.describe', async () => {
    const { client } = await connect(revision, ownerKey);
    const found = await client.callTool({ name: 'tools.search', arguments: { query: 'create an invoice' } });
    const hits = (found.structuredContent as { tools: { name: string; summary: string }[] }).tools;
    expect(hits[0].name).toBe('invoices.create');
    expect(Object.keys(hits[0]).sort()).toEqual(['module', 'name', 'risk', 'summary']);
    const inModule = await client.callTool({ name: 'tools.search', arguments: { query: 'list', module: 'employees' } });
    expect((inModule.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['employees.list']);
    const described = await client.callTool({ name: 'tools.describe', arguments: { name: 'invoices.create' } });
    expect((described.structuredContent as { tool: { input_schema: { required: string[] } } }).tool.input_schema.required).toContain('customer_id');
    const unknown = await client.callTool({ name: 'tools.describe', arguments: { name: 'invoices.teleport' } });
    expect(unknown).toMatchObject({ isError: true, structuredContent: { code: 'not_found' } });
    const bad = await client.callTool({ name: 'tools.search', arguments: { query: '' } });
    expect(bad).toMatchObject({ isError: true, structuredContent: { code: 'invalid_input', field: '/query' } });
  });
});

describe('the /mcp endpoint over HTTP', () => {
  it('answers a missing or bad credential 401 with the resource_metadata challenge', async () => {
    for (const headers of [{}, { authorization: 'Bearer nk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }] as Record<string, string>[]) {
      const r = await post(initialize, headers);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('unauthenticated');
      expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${sys.gatewayUrl}/.well-known/oauth-protected-resource/mcp", scope="tools:read"`);
    }
  });

  it('refuses browser origins other than its own and loopback (DNS rebinding)', async () => {
    const auth = { authorization: `Bearer ${ownerKey}` };
    expect((await post(initialize, { ...auth, origin: 'http://evil.example.com' })).status).toBe(403);
    expect((await post(initialize, { ...auth, origin: 'null' })).status).toBe(403);
    expect((await post(initialize, { ...auth, origin: 'http://localhost:5173' })).status).toBe(200);
    expect((await post(initialize, { ...auth, origin: new URL(sys.gatewayUrl).origin })).status).toBe(200);
  });

  it('binds a 2025 session to the credential that opened it', async () => {
    const { transport } = await connect('2025-11-25', ownerKey);
    const stranger = await sys.key((await sys.workspace('Ajena SAS')).workspace_id, 'owner');
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const headers = { 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-11-25' };
    expect((await post(ping, { ...headers, authorization: `Bearer ${stranger.api_key}` })).status).toBe(404);
    expect((await post(ping, { ...headers, authorization: `Bearer ${ownerKey}` })).status).toBe(200);
    expect((await post(ping, { authorization: `Bearer ${ownerKey}`, 'mcp-protocol-version': '2025-11-25' })).status).toBe(400);
    // DELETE ends the session; its id is then unknown.
    const ended = await fetch(`${sys.gatewayUrl}/mcp`, { method: 'DELETE', headers: { ...headers, authorization: `Bearer ${ownerKey}` } });
    expect(ended.status).toBe(200);
    expect((await post(ping, { ...headers, authorization: `Bearer ${ownerKey}` })).status).toBe(404);
  });

  it('answers the catalog tools on REST too', async () => {
    const r = await sys.invoke('tools.search', { query: 'employees' }, ownerKey);
    expect(r.status).toBe(200);
    expect(r.body.tool).toBe('tools.search');
    expect(r.body.output.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['employees.create', 'employees.get', 'employees.list']));
    expect(r.headers.get('ratelimit-policy')).toMatch(/"credential"/);
    expect((await sys.invoke('tools.describe', {}, ownerKey)).body).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect((await sys.invoke('tools.search', { query: 'x' }, undefined as unknown as string)).status).toBe(401);
  });
});

describe('calls held for approval', () => {
  it('answers a held call as a normal result with pending_approval, on both revisions', async () => {
    // A workspace opened by an agent holds the agent's non-read calls until its owner decides.
    const signup = await sys.fetch('/v1/auth/agent-signup', { body: { email: uniqueAddress('duena@mcp.example'), workspace_name: 'Abierta Por Agente MCP', agent_name: 'Asistente' } });
    expect(signup.status, JSON.stringify(signup.body)).toBe(201);
    for (const revision of ['2025-11-25', '2026-07-28'] as const) {
      const { client } = await connect(revision, signup.body.api_key);
      const held = await client.callTool({ name: 'parties.create', arguments: { name: `Retenido ${revision}`, kind: 'customer' } });
      expect(held.isError).toBeFalsy();
      expect(held.structuredContent).toEqual({ status: 'pending_approval', approval_id: expect.stringMatching(/^apr_/) });
      // Reads are not held.
      const read = await client.callTool({ name: 'parties.list', arguments: {} });
      expect(read.structuredContent).toMatchObject({ rows: [] });
      // The agent cannot decide its own request: a refusal, rendered as a tool error.
      const approvalId = (held.structuredContent as { approval_id: string }).approval_id;
      const decide = await client.callTool({ name: 'approvals.decide', arguments: { id: approvalId, decision: 'approve' } });
      expect(decide).toMatchObject({ isError: true, structuredContent: { code: 'policy_denied' } });
    }
  });
});

describe('the pipeline\'s guarantees over MCP', () => {
  it('replays a call with the same idempotency key (in _meta) and refuses the key with another input', async () => {
    const { client } = await connect('2026-07-28', ownerKey);
    const meta = { 'io.cuadra/idempotency-key': 'mcp-once-1' };
    const input = { name: 'Una Sola Vez MCP', kind: 'customer' };
    const first = await client.callTool({ name: 'parties.create', arguments: input, _meta: meta });
    const again = await client.callTool({ name: 'parties.create', arguments: input, _meta: meta });
    expect(again.structuredContent).toEqual(first.structuredContent);
    const other = await client.callTool({ name: 'parties.create', arguments: { ...input, name: 'Otra' }, _meta: meta });
    expect(other).toMatchObject({ isError: true, structuredContent: { code: 'idempotency_conflict' } });
    const listed = await sys.invoke('parties.list', { search: 'Una Sola Vez MCP' }, ownerKey);
    expect(listed.body.output.rows).toHaveLength(1);
  });

  it('asks for approval (approval_required with its id), then runs once with the approval id in _meta', async () => {
    const admin = await sys.key(workspaceId, 'admin');
    const created = await sys.invoke('policies.create', { name: 'Ask before admins open projects', priority: 50, match: { tools: ['projects.create'], roles: ['admin'] }, effect: 'ask' }, ownerKey);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    try {
      const { client } = await connect('2025-11-25', admin.api_key);
      const input = { name: 'Proyecto Pedido', key: 'PEDIDO' };
      const asked = await client.callTool({ name: 'projects.create', arguments: input });
      expect(asked).toMatchObject({ isError: true, structuredContent: { code: 'approval_required', approval_id: expect.stringMatching(/^apr_/) } });
      const approvalId = (asked.structuredContent as { approval_id: string }).approval_id;
      // A person decides (CONTRACT §10): the owner's own key.
      const ownerPerson = await sys.person(workspaceId, 'owner', 'Dueña MCP');
      expect((await sys.invoke('approvals.decide', { id: approvalId, decision: 'approve' }, ownerPerson.api_key)).status).toBe(200);
      const ran = await client.callTool({ name: 'projects.create', arguments: input, _meta: { 'io.cuadra/approval-id': approvalId } });
      expect(ran.isError).toBeFalsy();
      expect((ran.structuredContent as { project: { key: string } }).project.key).toBe('PEDIDO');
      const reused = await client.callTool({ name: 'projects.create', arguments: input, _meta: { 'io.cuadra/approval-id': approvalId } });
      expect(reused).toMatchObject({ isError: true, structuredContent: { code: 'policy_denied' } });
    } finally {
      await sys.invoke('policies.delete', { id: created.body.output.policy.id }, ownerKey);
    }
  });

  it('writes every MCP call to the workspace ledger, as REST calls are', async () => {
    const ws = await sys.workspace('Ledger Mcp SAS');
    const { client } = await connect('2026-07-28', ws.api_key);
    await client.callTool({ name: 'parties.create', arguments: { name: 'Registrada', kind: 'customer' } });
    await client.callTool({ name: 'parties.create', arguments: { kind: 'customer' } });
    const ledger = await sys.invoke('ledger.list', {}, ws.api_key);
    const outcomes = ledger.body.output.rows.map((e: { tool: string; outcome: string }) => `${e.tool}:${e.outcome}`).reverse();
    expect(outcomes).toEqual(['parties.create:ok', 'parties.create:invalid_input']);
  });
});

describe('OAuth through the MCP client\'s auth provider', () => {
  it('discovers the authorization server from the 401, registers, signs the person in, and uses the token', async () => {
    const { people, db } = await peopleOf(sys);
    try {
      const user = await people.createUser({ email: person.email, name: 'Lucía Pérez', password: person.password });
      await people.setMembership(workspaceId, user._id, 'owner');
    } finally {
      await db.close();
    }
    const auth = new AssistantAuth();
    const url = new URL(`${sys.gatewayUrl}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: auth, onInsufficientScope: 'throw' });
    const client = new Client({ name: 'asistente', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(auth.authorizations).toBe(1);
    expect(auth.callback!.searchParams.get('iss')).toBe(sys.gatewayUrl);
    await first.finishAuth(auth.callback!.searchParams);
    expect(auth.tokens()?.scope).toBe('tools:read');

    const transport = new StreamableHTTPClientTransport(url, { authProvider: auth, onInsufficientScope: 'throw' });
    const authed = new Client({ name: 'asistente', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await authed.connect(transport);
    open.push(authed);
    // tools:read reaches the read tools only, and the listing says so.
    const { tools } = await authed.listTools();
    expect(tools.length).toBeGreaterThan(5);
    expect(tools.every((t) => t.annotations?.readOnlyHint)).toBe(true);
    const read = await authed.callTool({ name: 'parties.list', arguments: {} });
    expect(read.isError).toBeFalsy();
    // A write needs `tools`: 403 insufficient_scope with a step-up challenge, before anything runs.
    const write = await authed.callTool({ name: 'parties.create', arguments: { name: 'Sin Permiso', kind: 'customer' } }).then(() => null, (e: unknown) => e);
    expect(write).toBeInstanceOf(InsufficientScopeError);
    expect((write as InsufficientScopeError).requiredScope).toBe('tools');

    // Step-up, as the client does by default: it asks the person again for the wider scope.
    const stepUp = new StreamableHTTPClientTransport(url, { authProvider: auth });
    const upgraded = new Client({ name: 'asistente', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await upgraded.connect(stepUp);
    open.push(upgraded);
    const asked = await upgraded.callTool({ name: 'parties.create', arguments: { name: 'Con Permiso', kind: 'customer' } }).then(() => null, (e: unknown) => e);
    expect(asked).toBeInstanceOf(UnauthorizedError);
    expect(auth.authorizations).toBe(2);
    await stepUp.finishAuth(auth.callback!.searchParams);
    expect(auth.tokens()?.scope?.split(' ')).toContain('tools');
    const done = await upgraded.callTool({ name: 'parties.create', arguments: { name: 'Con Permiso', kind: 'customer' } });
    expect((done.structuredContent as { party: { name: string } }).party.name).toBe('Con Permiso');
    // A token for another workspace's resource is no way in: the person's token is sealed to this workspace.
    const other = await sys.workspace('Ajena Oauth SAS');
    const crossTenant = await post({ jsonrpc: '2.0', id: 9, method: 'ping' }, { authorization: `Bearer ${auth.tokens()!.access_token}`, 'x-tenant-id': other.workspace_id });
    expect(crossTenant.status).toBe(403);
    expect(crossTenant.body.code).toBe('policy_denied');
  });
});
