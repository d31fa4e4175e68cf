import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
const owner = testPrincipal();

beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

type Agent = { id: string; name: string; model: string; instructions: string | null; tools: string[]; status: string };
const agentOf = (r: unknown) => (r as { output: { agent: Agent } }).output.agent;
const rowsOf = (r: unknown) => (r as { output: { rows: Agent[]; total?: number; next_cursor?: string } }).output;

let counter = 0;
/** A valid agent with a fresh name; each test overrides what it is about. */
function agent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return { name: `Agente ${counter}`, model: 'embedded', ...overrides };
}

describe('agents.create', () => {
  it('creates an agent with defaults and reads it back', async () => {
    const created = await svc.call('agents.create', agent({ name: 'Cobranza' }), owner);
    expect(created.ok).toBe(true);
    const a = agentOf(created);
    expect(a.id).toMatch(/^agt_/);
    expect(a).toMatchObject({ name: 'Cobranza', model: 'embedded', instructions: null, tools: [], status: 'active', description: null });
    const got = await svc.call('agents.get', { id: a.id }, owner);
    expect(got).toMatchObject({ ok: true, output: { agent: { id: a.id, name: 'Cobranza' } } });
  });

  it('keeps instructions up to 20,000 characters, tool patterns and a paused status', async () => {
    const instructions = 'Responde en español. '.repeat(1000).slice(0, 20_000);
    const tools = ['invoices.%', '%:read', 'parties.create', 'payments.%:write'];
    const a = agentOf(await svc.call('agents.create', agent({ instructions, tools, status: 'paused', description: 'Sigue facturas vencidas' }), owner));
    expect(a.instructions).toHaveLength(20_000);
    expect(a).toMatchObject({ tools, status: 'paused', description: 'Sigue facturas vencidas' });
  });

  it('refuses input that does not fit the schema with a JSON Pointer', async () => {
    const call = (input: Record<string, unknown>) => svc.call('agents.create', input, owner);
    expect(await call({ model: 'm' })).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect(await call({ name: '   ', model: 'm' })).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect(await call({ name: 'Sin modelo' })).toMatchObject({ code: 'invalid_input', field: '/model' });
    expect(await call(agent({ model: '' }))).toMatchObject({ code: 'invalid_input', field: '/model' });
    expect(await call(agent({ instructions: 'x'.repeat(20_001) }))).toMatchObject({ code: 'invalid_input', field: '/instructions' });
    expect(await call(agent({ status: 'running' }))).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await call(agent({ tools: 'invoices.%' }))).toMatchObject({ code: 'invalid_input', field: '/tools' });
    expect(await call(agent({ tools: ['invoices.%', 'invoices.%'] }))).toMatchObject({ code: 'invalid_input', field: '/tools' });
    expect(await call(agent({ tools: ['invoices.%', 'Invoices.create'] }))).toMatchObject({ code: 'invalid_input', field: '/tools/1' });
    expect(await call(agent({ tools: ['invoices.%:delete'] }))).toMatchObject({ code: 'invalid_input', field: '/tools/0' });
    expect(await call(agent({ tools: ['invoices.*'] }))).toMatchObject({ code: 'invalid_input', field: '/tools/0' });
    expect(await call(agent({ tools: [''] }))).toMatchObject({ code: 'invalid_input', field: '/tools/0' });
    expect(await call(agent({ temperature: 0.2 }))).toMatchObject({ code: 'invalid_input', field: '/temperature' });
    // The model is the embedded one or an active ai_models record of the workspace (issue 37).
    expect(await call(agent({ model: 'anthropic/claude-sonnet-4-5' }))).toMatchObject({ code: 'invalid_input', field: '/model' });
    expect(await call(agent({ budget: { daily_tokens: 0 } }))).toMatchObject({ code: 'invalid_input', field: '/budget/daily_tokens' });
    expect(await call(agent({ limits: { max_steps: 51 } }))).toMatchObject({ code: 'invalid_input', field: '/limits/max_steps' });
    expect(await call(agent({ procedure: ['Invoices.list'] }))).toMatchObject({ code: 'invalid_input', field: expect.stringMatching(/^\/procedure/) });
  });

  it('refuses a second agent with the same name, in any case, in one workspace, but not in another', async () => {
    const ws = testPrincipal();
    expect((await svc.call('agents.create', agent({ name: 'Tesorería' }), ws)).ok).toBe(true);
    const again = await svc.call('agents.create', agent({ name: ' tesorería ' }), ws);
    expect(again).toMatchObject({ ok: false, code: 'conflict' });
    expect((again as { message: string }).message).toContain('tesorería');
    expect(rowsOf(await svc.call('agents.list', {}, ws)).total).toBe(1);
    expect((await svc.call('agents.create', agent({ name: 'Tesorería' }), testPrincipal())).ok).toBe(true);
  });

  it('is refused to a viewer and a member (role), a read-only key (pattern) and a read-only token (scope)', async () => {
    expect(await svc.call('agents.create', agent(), { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('agents.create', agent(), { ...owner, role: 'member' })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('agents.create', agent(), { ...owner, patterns: ['agents.%:read'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('agents.create', agent(), { ...owner, scopes: ['tools:read'] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await svc.call('agents.create', agent(), { ...owner, role: 'admin', patterns: ['agents.create'] })).ok).toBe(true);
  });
});

describe('agents.get', () => {
  it('answers not_found for an unknown id and for another workspace’s agent', async () => {
    expect(await svc.call('agents.get', { id: 'agt_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const other = testPrincipal();
    const theirs = agentOf(await svc.call('agents.create', agent({ name: 'Agente ajeno' }), other));
    expect((await svc.call('agents.get', { id: theirs.id }, other)).ok).toBe(true);
    expect(await svc.call('agents.get', { id: theirs.id }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('validates its input and its reach', async () => {
    expect(await svc.call('agents.get', {}, owner)).toMatchObject({ code: 'invalid_input', field: '/id' });
    expect(await svc.call('agents.get', { id: 'agt_x', runs: true }, owner)).toMatchObject({ code: 'invalid_input', field: '/runs' });
    expect(await svc.call('agents.get', { id: 'agt_x' }, { ...owner, patterns: ['invoices.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('agents.get', { id: 'agt_x' }, { ...owner, scopes: ['sites.edit'] })).toMatchObject({ code: 'insufficient_scope' });
    expect(await svc.call('agents.get', { id: 'agt_x' }, { ...owner, role: 'viewer', scopes: ['tools:read'] })).toMatchObject({ code: 'not_found' });
  });
});

describe('agents.list', () => {
  it('lists newest first, filters by status, searches and pages', async () => {
    const ws = testPrincipal();
    await svc.call('agents.create', agent({ name: 'Facturación' }), ws);
    await svc.call('agents.create', agent({ name: 'Nómina', status: 'paused' }), ws);
    await svc.call('agents.create', agent({ name: 'Facturas de compra' }), ws);
    expect(rowsOf(await svc.call('agents.list', {}, ws)).rows.map((a) => a.name)).toEqual(['Facturas de compra', 'Nómina', 'Facturación']);
    expect(rowsOf(await svc.call('agents.list', { status: 'paused' }, ws)).rows.map((a) => a.name)).toEqual(['Nómina']);
    expect(rowsOf(await svc.call('agents.list', { status: 'active', search: 'FACTUR' }, ws)).rows).toHaveLength(2);
    expect(rowsOf(await svc.call('agents.list', { search: 'factura[' }, ws)).rows).toEqual([]);
    // The model and the description are searched too, as the agents records source does.
    expect(rowsOf(await svc.call('agents.list', { search: 'EMBEDDED' }, ws)).rows).toHaveLength(3);
    const first = rowsOf(await svc.call('agents.list', { limit: 2 }, ws));
    expect(first.total).toBe(3);
    expect(rowsOf(await svc.call('agents.list', { limit: 2, cursor: first.next_cursor }, ws))).toEqual({ total: 3, rows: [expect.objectContaining({ name: 'Facturación' })] });
  });

  it('never shows another workspace’s agents', async () => {
    await svc.call('agents.create', agent({ name: 'Agente secreto' }), testPrincipal());
    expect(await svc.call('agents.list', { search: 'secreto' }, owner)).toMatchObject({ ok: true, output: { rows: [] } });
  });

  it('refuses bad filters with a JSON Pointer, and callers it does not reach', async () => {
    expect(await svc.call('agents.list', { limit: 101 }, owner)).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await svc.call('agents.list', { cursor: 'not-a-cursor' }, owner)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await svc.call('agents.list', { status: 'running' }, owner)).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await svc.call('agents.list', {}, { ...owner, patterns: ['parties.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('agents.list', {}, { ...owner, scopes: [] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await svc.call('agents.list', {}, { ...owner, role: 'member', scopes: ['tools:read'] })).ok).toBe(true);
  });
});

describe('the Agent graph', () => {
  it('resolves agents of the caller’s workspace only, by query and by entity reference', async () => {
    const ws = testPrincipal();
    const mine = agentOf(await svc.call('agents.create', agent({ name: 'Mío', tools: ['tasks.%'] }), ws));
    const theirs = agentOf(await svc.call('agents.create', agent({ name: 'Suyo' }), testPrincipal()));

    const one = await svc.graphql('query($id: ID!) { agent(id: $id) { id name model tools status } }', { id: mine.id }, ws);
    expect(one.body.data.agent).toEqual({ id: mine.id, name: 'Mío', model: 'embedded', tools: ['tasks.%'], status: 'active' });
    expect((await svc.graphql('query($id: ID!) { agent(id: $id) { id } }', { id: theirs.id }, ws)).body.data.agent).toBeNull();
    expect((await svc.graphql('{ agents(limit: 5) { name } }', {}, ws)).body.data.agents).toEqual([{ name: 'Mío' }]);

    const entities = await svc.graphql(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id name } } }',
      { r: [{ __typename: 'Agent', id: mine.id }, { __typename: 'Agent', id: theirs.id }] },
      ws,
    );
    expect(entities.body.data._entities).toEqual([{ id: mine.id, name: 'Mío' }, null]);
  });
});

describe('the subgraph door', () => {
  it('refuses a call without a gateway assertion', async () => {
    const r = await svc.graphql('{ agents { id } }', {}, null);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
  });

  it('answers unknown tools, and tools of modules it does not own, with unknown_tool', async () => {
    expect(await svc.call('agents.teleport', {}, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
    expect(await svc.call('tasks.create', { project_id: 'prj_x', title: 'X' }, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
  });
});
