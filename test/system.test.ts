import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let ownerKey: string;
let workspaceId: string;

beforeAll(async () => {
  sys = await startTestSystem('system', OWN_SYSTEM_SETTINGS);
  const ws = await sys.workspace('Andes Trading SAS');
  ownerKey = ws.api_key;
  workspaceId = ws.workspace_id;
});
afterAll(async () => {
  await sys?.stop();
});

describe('health and catalog', () => {
  it('reports every subgraph, the database and Redis', async () => {
    const r = await sys.fetch('/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok', subgraphs: { crm: 'ok', invoices: 'ok', payroll: 'ok', projects: 'ok', agents: 'ok', marketing: 'ok', inventory: 'ok' }, database: 'ok', redis: 'ok' });
  });

  it('lists tools of all six subgraphs in the contract shape', async () => {
    const r = await sys.fetch('/v1/tools', { key: ownerKey });
    expect(r.status).toBe(200);
    const names: string[] = r.body.tools.map((t: { name: string }) => t.name);
    for (const name of ['parties.create', 'items.create', 'invoices.create', 'employees.create', 'projects.create', 'tasks.create', 'agents.create']) {
      expect(names).toContain(name);
    }
    const tool = r.body.tools.find((t: { name: string }) => t.name === 'invoices.list');
    // The contract's fields, plus output_schema (issue 15; CHANGELOG).
    expect(Object.keys(tool).sort()).toEqual(['annotations', 'description', 'input_schema', 'module', 'name', 'output_schema', 'risk', 'scope']);
    expect(tool).toMatchObject({ module: 'invoices', risk: 'read', scope: 'tools:read', annotations: { readOnlyHint: true, destructiveHint: false } });
    const filtered = await sys.fetch('/v1/tools?module=parties', { key: ownerKey });
    expect(new Set(filtered.body.tools.map((t: { module: string }) => t.module))).toEqual(new Set(['parties']));
  });

  it('lists only what a narrowed key reaches', async () => {
    const readOnly = await sys.key(workspaceId, 'owner', ['%:read']);
    const r = await sys.fetch('/v1/tools', { key: readOnly.api_key });
    expect(r.body.tools.length).toBeGreaterThan(3);
    expect(r.body.tools.every((t: { risk: string }) => t.risk === 'read')).toBe(true);
    const crmOnly = await sys.key(workspaceId, 'owner', ['parties.%']);
    const c = await sys.fetch('/v1/tools', { key: crmOnly.api_key });
    const names: string[] = c.body.tools.map((t: { name: string }) => t.name);
    expect(names.every((n) => n.startsWith('parties.'))).toBe(true);
    expect(names).toEqual(expect.arrayContaining(['parties.create', 'parties.get', 'parties.list']));
  });
});

describe('invoking tools through the gateway', () => {
  it('runs a write and a read on each subgraph', async () => {
    const party = await sys.invoke('parties.create', { name: 'Cliente Uno', kind: 'customer', tax_id: { type: 'NIT', number: '890900608-9' } }, ownerKey);
    expect(party.status).toBe(200);
    expect(party.body).toMatchObject({ tool: 'parties.create', output: { party: { name: 'Cliente Uno' } } });
    expect(party.headers.get('ratelimit-policy')).toMatch(/"credential";q=\d+;w=\d+/);
    expect(party.headers.get('ratelimit')).toMatch(/;r=\d+;t=\d+/);

    const item = await sys.invoke('items.create', { name: 'Consultoría', kind: 'service', price: { amount: 15000000, currency: 'COP' } }, ownerKey);
    expect(item.status).toBe(200);
    const invoice = await sys.invoke('invoices.create', { customer_id: party.body.output.party.id, currency: 'COP', lines: [{ item_id: item.body.output.item.id, quantity: 2 }] }, ownerKey);
    expect(invoice.status).toBe(200);
    // 2 × 150,000.00 COP + 19 % VAT
    expect(invoice.body.output.invoice).toMatchObject({ status: 'draft', subtotal: 30000000, tax_total: 5700000, total: 35700000 });

    const got = await sys.invoke('invoices.get', { id: invoice.body.output.invoice.id }, ownerKey);
    expect(got.body.output.invoice.id).toBe(invoice.body.output.invoice.id);

    const employee = await sys.invoke('employees.create', {
      name: 'Ana Gómez', document: { type: 'CC', number: '1020304050' }, hire_date: '2026-02-01', position: 'Contadora',
      salary: { amount: 400000000, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, ownerKey);
    expect(employee.status).toBe(200);
    const project = await sys.invoke('projects.create', { name: 'Cierre anual', key: 'CIERRE' }, ownerKey);
    expect(project.status).toBe(200);
    const task = await sys.invoke('tasks.create', { project_id: project.body.output.project.id, title: 'Conciliar bancos' }, ownerKey);
    expect(task.status).toBe(200);
    const agent = await sys.invoke('agents.create', { name: 'Cobrador', model: 'embedded', instructions: 'Remind customers of overdue invoices.' }, ownerKey);
    expect(agent.status).toBe(200);

    for (const tool of ['parties.list', 'items.list', 'invoices.list', 'employees.list', 'projects.list', 'tasks.list', 'agents.list']) {
      const listed = await sys.invoke(tool, {}, ownerKey);
      expect(listed.status, tool).toBe(200);
      expect(listed.body.output.rows.length, tool).toBeGreaterThan(0);
    }
  });

  it('refuses bad input with the contract code and a JSON Pointer', async () => {
    const missing = await sys.invoke('parties.create', { kind: 'customer' }, ownerKey);
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ error: expect.any(String), code: 'invalid_input', field: '/name' });
    const nested = await sys.invoke('invoices.create', { customer_id: 'pty_x', currency: 'COP', lines: [{ quantity: -1, description: 'x', unit_price: 1 }] }, ownerKey);
    expect(nested.status).toBe(422);
    expect(nested.body.field).toBe('/lines/0/quantity');
    const notObject = await sys.invoke('parties.list', [1, 2], ownerKey);
    expect(notObject.status).toBe(422);
    expect(notObject.body.field).toBe('');
    const badJson = await sys.fetch('/v1/tools/parties.list:invoke', { key: ownerKey, body: '{"limit":', headers: { 'content-type': 'application/json' } });
    expect(badJson.status).toBe(422);
    expect(badJson.body).toMatchObject({ code: 'invalid_input', field: '' });
    // A rule the schema cannot say, checked by the owning subgraph, keeps its field.
    const nit = await sys.invoke('parties.create', { name: 'X', kind: 'vendor', tax_id: { type: 'NIT', number: '890900608-1' } }, ownerKey);
    expect(nit.status).toBe(422);
    expect(nit.body.field).toBe('/tax_id/number');
  });

  it('answers unknown tools, missing records and conflicts with their codes', async () => {
    const unknown = await sys.invoke('parties.teleport', {}, ownerKey);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('unknown_tool');
    const missing = await sys.invoke('parties.get', { id: 'pty_doesnotexist' }, ownerKey);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: expect.any(String), code: 'not_found' });
    const p = { name: 'Proyecto', key: 'DUPL' };
    expect((await sys.invoke('projects.create', p, ownerKey)).status).toBe(200);
    const dup = await sys.invoke('projects.create', p, ownerKey);
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
  });

  it('refuses a body over the limit with 413 before reading it', async () => {
    const big = { name: 'x'.repeat(300 * 1024), kind: 'customer' };
    const r = await sys.invoke('parties.create', big, ownerKey);
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('body_too_large');
  });
});

describe('credentials', () => {
  it('refuses a call without a key, with a challenge', async () => {
    const r = await sys.invoke('parties.list', {}, undefined as unknown as string);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
    expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${sys.gatewayUrl}/.well-known/oauth-protected-resource"`);
    expect((await sys.fetch('/v1/tools')).status).toBe(401);
    expect((await sys.fetch('/graphql', { body: { query: '{ parties { id } }' } })).status).toBe(401);
  });

  it('refuses unknown and malformed keys', async () => {
    expect((await sys.invoke('parties.list', {}, 'nk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(401);
    expect((await sys.invoke('parties.list', {}, 'not-a-key')).status).toBe(401);
  });

  it('refuses a revoked key at once', async () => {
    const k = await sys.key(workspaceId, 'owner');
    expect((await sys.invoke('parties.list', {}, k.api_key)).status).toBe(200);
    expect(await sys.identity.revokeApiKey(workspaceId, k.id)).toBe(true);
    const r = await sys.invoke('parties.list', {}, k.api_key);
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/revoked/);
  });

  it('stores keys only as hashes', async () => {
    const k = await sys.key(workspaceId, 'viewer');
    const { MongoClient } = (await import('mongoose')).default.mongo;
    const client = await MongoClient.connect(process.env.MONGO_URL!);
    try {
      const stored = await client.db(sys.gatewayDb).collection('api_keys').findOne({ _id: k.id as never });
      expect(stored).not.toBeNull();
      expect(JSON.stringify(stored)).not.toContain(k.api_key.slice(3));
      expect(stored!.hash).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await client.close();
    }
  });

  it('applies the role and key patterns', async () => {
    const viewer = await sys.key(workspaceId, 'viewer');
    expect((await sys.invoke('parties.list', {}, viewer.api_key)).status).toBe(200);
    const denied = await sys.invoke('parties.create', { name: 'V', kind: 'customer' }, viewer.api_key);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('policy_denied');
    const readKey = await sys.key(workspaceId, 'owner', ['%:read']);
    expect((await sys.invoke('agents.create', { name: 'Nope', model: 'embedded', instructions: 'y' }, readKey.api_key)).body.code).toBe('policy_denied');
  });

  it('refuses X-Tenant-Id naming another workspace', async () => {
    const other = await sys.workspace('Otra SAS');
    const r = await sys.invoke('parties.list', {}, ownerKey, { 'x-tenant-id': other.workspace_id });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('policy_denied');
    expect((await sys.invoke('parties.list', {}, ownerKey, { 'x-tenant-id': workspaceId })).status).toBe(200);
  });

  it('refuses a subgraph reached directly without a gateway assertion', async () => {
    const res = await fetch(`${sys.subgraphs.crm.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ownerKey}` },
      body: JSON.stringify({ query: 'mutation { invokeCrmTool(tool: "parties.list", input: {}) }' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
  });
});

describe('the composed graph', () => {
  it('resolves Invoice.customer from crm through the gateway, sealed per workspace', async () => {
    const party = await sys.invoke('parties.create', { name: 'Grafo Cliente', kind: 'customer' }, ownerKey);
    const partyId = party.body.output.party.id;
    const inv = await sys.invoke('invoices.create', { customer_id: partyId, currency: 'COP', lines: [{ description: 'Servicio', quantity: 1, unit_price: 100000, tax_rate_ppm: 50000 }] }, ownerKey);
    const invoiceId = inv.body.output.invoice.id;
    const query = 'query($id: ID!) { invoice(id: $id) { id total customer { id name kind } } }';
    const r = await sys.fetch('/graphql', { key: ownerKey, body: { query, variables: { id: invoiceId } } });
    expect(r.status).toBe(200);
    expect(r.body.data.invoice).toEqual({ id: invoiceId, total: 105000, customer: { id: partyId, name: 'Grafo Cliente', kind: 'customer' } });

    // Another workspace sees neither the invoice nor, through an invoice of its own, the party.
    const other = await sys.workspace('Intrusa SAS');
    const theirs = await sys.fetch('/graphql', { key: other.api_key, body: { query, variables: { id: invoiceId } } });
    expect(theirs.body.data.invoice).toBeNull();
    // Nor can it invoice the party: the buyer is read from crm in the caller's workspace, where it does not exist.
    const sneaky = await sys.invoke('invoices.create', { customer_id: partyId, currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 1 }] }, other.api_key);
    expect(sneaky.status).toBe(422);
    expect(sneaky.body).toMatchObject({ code: 'invalid_input', field: '/customer_id' });
    expect(JSON.stringify(sneaky.body)).not.toContain('Grafo Cliente');
    // And the tools refuse the other workspace's ids.
    expect((await sys.invoke('invoices.get', { id: invoiceId }, other.api_key)).status).toBe(404);
    expect((await sys.invoke('parties.get', { id: partyId }, other.api_key)).status).toBe(404);
  });
});

describe('graph reads follow the credential', () => {
  it('refuses a narrowed key the data of other modules', async () => {
    const invoicesOnly = await sys.key(workspaceId, 'owner', ['invoices.%']);
    const employees = await sys.fetch('/graphql', { key: invoicesOnly.api_key, body: { query: '{ employees { id name } }' } });
    expect(employees.body.data).toBeNull();
    expect(employees.body.errors[0].extensions.code).toBe('policy_denied');
    const invoices = await sys.fetch('/graphql', { key: invoicesOnly.api_key, body: { query: '{ invoices(limit: 1) { id customer { id name } } }' } });
    expect(invoices.body.data.invoices).toHaveLength(1);
    // The customer lives in crm (parties): its id is the invoice's own data, its name is not reachable.
    expect(invoices.body.data.invoices[0].customer?.name ?? null).toBeNull();
    const viewer = await sys.key(workspaceId, 'viewer');
    const ok = await sys.fetch('/graphql', { key: viewer.api_key, body: { query: '{ employees { id } parties(limit: 1) { id } }' } });
    expect(ok.body.errors).toBeUndefined();
  });
});

describe('the operator command', () => {
  it('creates a workspace and prints one JSON line with a working owner key', async () => {
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(process.execPath, ['scripts/cuadra.ts', 'workspace', 'create', '--name', 'Operadora SAS', '--owner-email', 'ops@example.com'], {
      cwd: new URL('..', import.meta.url).pathname,
      env: { ...process.env, MONGO_DB: sys.gatewayDb },
      encoding: 'utf8',
    });
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]);
    expect(Object.keys(created).sort()).toEqual(['api_key', 'workspace_id']);
    expect(created.api_key).toMatch(/^nk_[0-9A-Za-z]{40}$/);
    const listed = await sys.fetch('/v1/tools', { key: created.api_key });
    expect(listed.status).toBe(200);
    expect(listed.body.tools.length).toBeGreaterThan(10);
    const bad = (() => {
      try {
        execFileSync(process.execPath, ['scripts/cuadra.ts', 'workspace', 'create', '--name', 'X', '--owner-email', 'not-an-email'], {
          cwd: new URL('..', import.meta.url).pathname, env: { ...process.env, MONGO_DB: sys.gatewayDb }, encoding: 'utf8', stdio: 'pipe',
        });
        return null;
      } catch (err) {
        return err as { status: number; stderr: string };
      }
    })();
    expect(bad?.status).toBe(1);
    expect(bad?.stderr).toMatch(/invalid_input/);
  });
});

describe('a subgraph going down', () => {
  it('gives unavailable for its tools while the others keep answering, and recovers', async () => {
    await sys.killSubgraph('payroll');
    const down = await sys.invoke('employees.list', {}, ownerKey);
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('unavailable');
    expect((await sys.invoke('parties.list', {}, ownerKey)).status).toBe(200);
    expect((await sys.invoke('invoices.list', {}, ownerKey)).status).toBe(200);
    const health = await sys.fetch('/healthz');
    expect(health.status).toBe(503);
    expect(health.body.subgraphs).toMatchObject({ payroll: 'unavailable', crm: 'ok' });
    // Nothing reached payroll, so the gateway wrote the attempt's entry, with its input's digest.
    const ledger = await sys.invoke('ledger.list', { tool: 'employees.list' }, ownerKey);
    const entry = ledger.body.output.rows.find((e: { outcome: string }) => e.outcome === 'unavailable');
    expect(entry).toMatchObject({ tool: 'employees.list', risk: 'read', input_digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await sys.restartSubgraph('payroll');
    expect((await sys.invoke('employees.list', {}, ownerKey)).status).toBe(200);
    expect((await sys.fetch('/healthz')).status).toBe(200);
  });
});
