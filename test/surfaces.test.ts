// One gate for every surface (issue 12): REST invoke, MCP tools/call and a /graphql tool mutation
// walk the same refusal table, share one rate limit, check Idempotency-Keys the same way, replay
// the same way, and every attempt is on the ledger.
import { ASSERTION_HEADER, signAssertion, type Principal } from '@cuadra/shared';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let workspace: string;

const clients: Client[] = [];
/** One MCP client per key, connected once (as an assistant does): its `server/discover` is a request too, counted like any. */
const clientOf = new Map<string, Client>();
const LIMIT = 12;

beforeAll(async () => {
  // The quota is the gateway's alone: a lent system, answering through a gateway of this file's own.
  sys = await startTestSystem('surfaces', OWN_SYSTEM_SETTINGS, { gatewayEnv: { RATE_LIMIT_PER_CREDENTIAL: `${LIMIT}/60` } });
  ({ workspace_id: workspace } = await sys.workspace('Superficies SAS'));
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await sys?.stop();
});

type Outcome = { status: number; code?: string; field?: string; replayed?: boolean; output?: any };

/** The three surfaces, each answering in the contract's terms. */
const surfaces: Record<string, (key: string | null, tool: string, input: unknown, idempotencyKey?: string) => Promise<Outcome>> = {
  async rest(key, tool, input, idempotencyKey) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    const res = await fetch(`${sys.gatewayUrl}/v1/tools/${tool}:invoke`, { method: 'POST', headers, body: JSON.stringify(input) });
    const body = (await res.json()) as any;
    return { status: res.status, code: body.code, field: body.field, replayed: res.headers.get('idempotent-replayed') === 'true', output: body.output };
  },
  async graphql(key, tool, input, idempotencyKey) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    const subgraph = tool.startsWith('parties.') ? 'Crm' : 'Invoices';
    const res = await fetch(`${sys.gatewayUrl}/graphql`, {
      method: 'POST', headers,
      body: JSON.stringify({ query: `mutation M($t: String!, $i: JSON!, $k: String) { invoke${subgraph}Tool(tool: $t, input: $i, idempotencyKey: $k) }`, variables: { t: tool, i: input, k: idempotencyKey ?? null } }),
    });
    const body = (await res.json()) as any;
    if (res.status !== 200) return { status: res.status, code: body.code, field: body.field };
    const answer = body.data[`invoke${subgraph}Tool`];
    return { status: answer.status, code: answer.body.code, field: answer.body.field, replayed: answer.replayed === true, output: answer.body.output };
  },
  async mcp(key, tool, input, idempotencyKey) {
    if (!key) {
      const res = await fetch(`${sys.gatewayUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      return { status: res.status, code: res.status === 401 ? 'unauthenticated' : undefined };
    }
    let client = clientOf.get(key);
    if (!client) {
      client = new Client({ name: 'surfaces', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${sys.gatewayUrl}/mcp`), { authProvider: { token: async () => key } }));
      clients.push(client);
      clientOf.set(key, client);
    }
    try {
      const result = await client.callTool({ name: tool, arguments: input as Record<string, unknown>, ...(idempotencyKey !== undefined ? { _meta: { 'io.cuadra/idempotency-key': idempotencyKey } } : {}) });
      const structured = result.structuredContent as any;
      if (result.isError) return { status: 0, code: structured?.code, field: structured?.field };
      return { status: 200, output: structured, replayed: (result._meta as any)?.['io.cuadra/replayed'] === true };
    } catch (err) {
      return { status: 0, code: `rpc:${(err as { code?: number }).code}` };
    }
  },
};

const same = (o: Outcome) => ({ code: o.code ?? 'ok', field: o.field });

describe.each(Object.keys(surfaces))('%s', (surface) => {
  const call = surfaces[surface];

  it('walks the refusal table exactly as REST does, and each attempt is on the ledger', async () => {
    const { api_key: key } = await sys.key(workspace, 'admin');
    const viewer = (await sys.key(workspace, 'viewer')).api_key;
    const cases: [string | null, string, unknown, string | undefined, { code: string; field?: string }][] = [
      [null, 'parties.create', { name: 'x', kind: 'customer' }, undefined, { code: 'unauthenticated' }],
      [viewer, 'parties.create', { name: 'x', kind: 'customer' }, undefined, { code: 'policy_denied' }],
      [key, 'parties.create', { kind: 'customer' }, undefined, { code: 'invalid_input', field: '/name' }],
      [key, 'parties.create', { name: 'x', kind: 'customer' }, 'a key with spaces', { code: 'invalid_input', field: '' }],
      [key, 'parties.create', { name: 'x', kind: 'customer' }, 'k'.repeat(256), { code: 'invalid_input', field: '' }],
      [key, 'parties.get', { id: 'pty_nothing' }, undefined, { code: 'not_found' }],
    ];
    for (const [credential, tool, input, idem, expected] of cases) {
      const got = await call(credential, tool, input, idem);
      if (surface === 'mcp' && expected.code === 'unauthenticated') expect(got.status).toBe(401);
      else expect({ case: [tool, idem, expected.code], ...same(got) }).toEqual({ case: [tool, idem, expected.code], code: expected.code, field: expected.field });
    }
    const entries = await sys.governanceFor().ledger.entries.find({ workspace, credential_id: { $in: [(await sys.identity.authenticateApiKey(key)).credential_id] } }).lean();
    expect(entries.map((e) => e.outcome).sort()).toEqual(['invalid_input', 'invalid_input', 'invalid_input', 'not_found'].sort());
  });

  it('replays a keyed call and runs it once', async () => {
    const { api_key: key } = await sys.key(workspace, 'admin');
    const first = await call(key, 'parties.create', { name: `Una vez ${surface}`, kind: 'customer' }, `once-${surface}`);
    const again = await call(key, 'parties.create', { name: `Una vez ${surface}`, kind: 'customer' }, `once-${surface}`);
    expect(first.status).toBe(200);
    expect(again.output).toEqual(first.output);
    if (surface !== 'mcp') expect(again.replayed).toBe(true);
    const conflict = await call(key, 'parties.create', { name: 'Otra', kind: 'customer' }, `once-${surface}`);
    expect(conflict.code).toBe('idempotency_conflict');
  });

  it('spends from the same rate limit as the other surfaces', async () => {
    const { api_key: key } = await sys.key(workspace, 'admin');
    // Half the quota through REST, the rest through this surface: the limit counts both.
    for (let i = 0; i < LIMIT / 2; i++) expect((await surfaces.rest(key, 'parties.list', {})).status).toBe(200);
    let limited: Outcome | undefined;
    for (let i = 0; i < LIMIT; i++) {
      const got = await call(key, 'parties.list', {});
      if (got.code === 'rate_limited') {
        limited = got;
        // Every MCP request counts (CONTRACT.md §3 step 2): the client's one server/discover took one.
        expect(i).toBe(LIMIT / 2 - (surface === 'mcp' ? 1 : 0));
        break;
      }
    }
    expect(limited?.code).toBe('rate_limited');
  });
});

describe('/graphql beyond tool mutations', () => {
  it('refuses the 2,003-character key with a newline that the planner used to take', async () => {
    const { api_key: key } = await sys.key(workspace, 'admin');
    const got = await surfaces.graphql(key, 'parties.create', { name: 'x', kind: 'customer' }, `${'k'.repeat(1000)}\n${'k'.repeat(1002)}`);
    expect(got).toMatchObject({ status: 422, code: 'invalid_input', field: '' });
  });

  it('rate-limits plain graph reads with the same limiter', async () => {
    const { api_key: key } = await sys.key(workspace, 'admin');
    let status = 0;
    let n = 0;
    for (; n < LIMIT + 2 && status !== 429; n++) {
      const res = await fetch(`${sys.gatewayUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query: '{ parties { id } }' }) });
      status = res.status;
      if (status === 200) expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    }
    expect(status).toBe(429);
    expect(n).toBe(LIMIT + 1);
  });

  it('refuses a tool mutation riding along other fields, and another subgraph\'s tool', async () => {
    const { api_key: key } = await sys.key(workspace, 'admin');
    const mixed = await fetch(`${sys.gatewayUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query: 'mutation { a: invokeCrmTool(tool: "parties.list", input: {}) b: invokeCrmTool(tool: "parties.list", input: {}) }' }) });
    expect(mixed.status).toBe(422);
    const other = await surfaces.graphql(key, 'parties.list', {});
    expect(other.status).toBe(200);
    const res = await fetch(`${sys.gatewayUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query: 'mutation { invokeInvoicesTool(tool: "parties.list", input: {}) }' }) });
    const body = (await res.json()) as any;
    expect(body.data.invokeInvoicesTool.body.code).toBe('unknown_tool');
  });
});

describe("a subgraph's tool mutation document", () => {
  it('answers the same on its short path as through Apollo, byte for byte (data, refusals inside it, thrown errors, aliases)', async () => {
    const member: Principal = { workspace, role: 'admin', actor: { type: 'api_key', id: 'key_direct' }, credential_id: 'key_direct', scopes: null, patterns: null };
    const post = async (principal: Principal, query: string, variables?: unknown, operationName?: string) => {
      const res = await fetch(`${sys.subgraphs.crm.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: signAssertion(principal, sys.keys.privateKey) },
        body: JSON.stringify({ query, variables, operationName }),
      });
      // Each call writes its own ledger entry: its receipt (seq, hash, signature) is the one part that differs.
      return { status: res.status, type: res.headers.get('content-type'), text: (await res.text()).replace(/"receipt":"\d+;[0-9a-f]{64};[\w-]+"/, '"receipt":"…"') };
    };
    // The short path takes only a document that is the tool mutation alone; `@include(if: true)` sends
    // the same mutation to Apollo, which executes it in full.
    const both = async (principal: Principal, field: string, variables?: unknown, head = 'mutation M($t: String!, $i: JSON!)') => {
      const short = await post(principal, `${head} { ${field} }`, variables);
      const apollo = await post(principal, `${head} { ${field} @include(if: true) }`, variables);
      expect(short).toEqual(apollo);
      return JSON.parse(short.text);
    };
    await sys.invoke('parties.create', { name: 'Atajo SAS', kind: 'customer' }, (await sys.key(workspace, 'admin')).api_key);
    const listed = await both(member, 'invokeCrmTool(tool: $t, input: $i)', { t: 'parties.list', i: { limit: 2 } });
    expect(listed.data.invokeCrmTool.status).toBe(200);
    expect(listed.data.invokeCrmTool.body.output.rows.length).toBeGreaterThan(0);
    const aliased = await both(member, 'x: invokeCrmTool(tool: $t, input: $i)', { t: 'parties.list', i: { limit: 1 } });
    expect(Object.keys(aliased.data)).toEqual(['x']);
    const refused = await both(member, 'invokeCrmTool(tool: $t, input: $i)', { t: 'parties.create', i: { name: 7, kind: 'customer' } });
    expect(refused.data.invokeCrmTool.body).toMatchObject({ code: 'invalid_input', field: '/name' });
    // A service assertion reads the graph and runs no tool: the resolver throws, the field is non-null.
    const service = { ...member, actor: { type: 'service' as const, id: 'invoices' } };
    const thrown = await both(service, 'invokeCrmTool(tool: $t, input: $i)', { t: 'parties.list', i: {} });
    expect(thrown).toMatchObject({ data: null, errors: [{ path: ['invokeCrmTool'], extensions: { code: 'policy_denied' } }] });
    // Literal arguments, and variables that do not coerce (Apollo answers those, before anything runs).
    const literal = await both(member, 'invokeCrmTool(tool: "parties.list", input: {limit: 1})', undefined, 'mutation');
    expect(literal.data.invokeCrmTool.status).toBe(200);
    const bad = await both(member, 'invokeCrmTool(tool: $t, input: $i)', { t: 5, i: {} });
    expect(bad.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    // An operationName the document does not have: not the short path's to run; Apollo refuses it and nothing is created.
    const named = await post(member, 'mutation M($t: String!, $i: JSON!) { invokeCrmTool(tool: $t, input: $i) }', { t: 'parties.create', i: { name: 'Nunca SAS', kind: 'customer' } }, 'Other');
    expect(named.status).not.toBe(200);
    expect(JSON.parse(named.text).data?.invokeCrmTool).toBeUndefined();
    const after = await both(member, 'invokeCrmTool(tool: $t, input: $i)', { t: 'parties.list', i: { search: 'Nunca' } });
    expect(after.data.invokeCrmTool.body.output.rows).toEqual([]);
  });
});
