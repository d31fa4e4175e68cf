import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { nitCheckDigit, parseNit } from '@cuadra/shared';

let crm: TestSubgraph;
const owner = testPrincipal();

beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await crm?.close();
});

describe('NIT check digit', () => {
  it('computes DIAN check digits', () => {
    // 800197268-4 is DIAN's own NIT; 860002964-4 and 890900608-9 are well-known company NITs.
    expect(nitCheckDigit('800197268')).toBe(4);
    expect(nitCheckDigit('860002964')).toBe(4);
    expect(nitCheckDigit('890900608')).toBe(9);
    expect(parseNit('800.197.268-4')).toEqual({ number: '800197268', checkDigit: 4 });
    expect(parseNit('800197268-5')).toBeNull();
  });
});

describe('parties.create', () => {
  it('creates a customer and reads it back', async () => {
    const created = await crm.call('parties.create', { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' }, tags: ['retail'] }, owner);
    expect(created.ok).toBe(true);
    const party = created.output.party;
    expect(party.id).toMatch(/^pty_/);
    expect(party.tax_id).toEqual({ type: 'NIT', number: '800197268', check_digit: 4 });
    const got = await crm.call('parties.get', { id: party.id }, owner);
    expect(got).toMatchObject({ ok: true, output: { party: { name: 'Tienda Andina SAS', kind: 'customer' } } });
  });

  it('refuses a NIT with a wrong check digit, naming the field', async () => {
    const r = await crm.call('parties.create', { name: 'X', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-5' } }, owner);
    expect(r).toMatchObject({ ok: false, code: 'invalid_input', field: '/tax_id/number' });
  });

  it('refuses input that does not fit the schema with a JSON Pointer', async () => {
    expect(await crm.call('parties.create', { kind: 'customer' }, owner)).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect(await crm.call('parties.create', { name: 'A', kind: 'friend' }, owner)).toMatchObject({ code: 'invalid_input', field: '/kind' });
    expect(await crm.call('parties.create', { name: 'A', kind: 'vendor', color: 'red' }, owner)).toMatchObject({ code: 'invalid_input', field: '/color' });
    expect(await crm.call('parties.create', { name: 'A', kind: 'vendor', contacts: [{ name: 'B', email: 'nope' }] }, owner)).toMatchObject({ code: 'invalid_input', field: '/contacts/0/email' });
  });

  it('refuses a second party with the same tax id in one workspace, but not in another', async () => {
    const input = { name: 'Dup', kind: 'vendor', tax_id: { type: 'NIT', number: '860002964-4' } };
    expect((await crm.call('parties.create', input, owner)).ok).toBe(true);
    expect(await crm.call('parties.create', input, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await crm.call('parties.create', input, testPrincipal())).ok).toBe(true);
  });

  it('is refused to a viewer (role) and to a key narrowed to read tools (pattern)', async () => {
    const input = { name: 'V', kind: 'customer' };
    expect(await crm.call('parties.create', input, { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    expect(await crm.call('parties.create', input, { ...owner, patterns: ['%:read'] })).toMatchObject({ code: 'policy_denied' });
    expect(await crm.call('parties.create', input, { ...owner, scopes: ['tools:read'] })).toMatchObject({ code: 'insufficient_scope' });
  });
});

describe('parties.get and parties.list', () => {
  it('never shows another workspace’s party', async () => {
    const other = testPrincipal();
    const r = await crm.call('parties.create', { name: 'Secreto Ltda', kind: 'customer' }, other);
    const id = r.output.party.id;
    expect(await crm.call('parties.get', { id }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const listed = await crm.call('parties.list', { search: 'secreto' }, owner);
    expect(listed).toMatchObject({ ok: true, output: { rows: [] } });
    expect((await crm.call('parties.list', {}, testPrincipal())).output).toEqual({ rows: [], total: 0 });
    const gql = await crm.graphql('query($id: ID!) { party(id: $id) { id name } }', { id }, owner);
    expect(gql.body.data.party).toBeNull();
  });

  it('filters by kind and searches case-insensitively', async () => {
    const ws = testPrincipal();
    for (const [n, kind] of [['Alfa Comercial', 'customer'], ['Beta Proveedores', 'vendor'], ['Gamma Mixta', 'both']] as const) {
      expect((await crm.call('parties.create', { name: n, kind }, ws)).ok).toBe(true);
    }
    const customers = await crm.call('parties.list', { kind: 'customer' }, ws);
    expect(customers.output.rows.map((p: any) => p.name).sort()).toEqual(['Alfa Comercial', 'Gamma Mixta']);
    const search = await crm.call('parties.list', { search: 'PROVEE' }, ws);
    expect(search.output.rows.map((p: any) => p.name)).toEqual(['Beta Proveedores']);
    expect(await crm.call('parties.list', { limit: 101 }, ws)).toMatchObject({ code: 'invalid_input', field: '/limit' });
  });

  it('pages newest first by cursor, each party once, total from the counter', async () => {
    const ws = testPrincipal();
    const made: string[] = [];
    for (let i = 0; i < 25; i++) made.push((await crm.call('parties.create', { name: `Cliente ${i}`, kind: i % 5 === 0 ? 'vendor' : 'customer' }, ws)).output.party.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (await crm.call('parties.list', { limit: 10, ...(cursor ? { cursor } : {}) }, ws)).output;
      expect(page.total).toBe(25);
      seen.push(...page.rows.map((p: any) => p.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
    const vendors = (await crm.call('parties.list', { kind: 'vendor', limit: 3 }, ws)).output;
    expect(vendors.rows.map((p: any) => p.name)).toEqual(['Cliente 20', 'Cliente 15', 'Cliente 10']);
    expect(vendors.total).toBeUndefined();
    const rest = (await crm.call('parties.list', { kind: 'vendor', limit: 3, cursor: vendors.next_cursor }, ws)).output;
    expect(rest.rows.map((p: any) => p.name)).toEqual(['Cliente 5', 'Cliente 0']);
    expect(rest.next_cursor).toBeUndefined();
    // A cursor is refused where it was not given out: typed, edited, or from another workspace.
    expect(await crm.call('parties.list', { cursor: 'page-2' }, ws)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await crm.call('parties.list', { cursor: vendors.next_cursor }, testPrincipal())).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await crm.call('parties.list', { offset: 10 }, ws)).toMatchObject({ code: 'invalid_input' });
  });
});

describe('the subgraph door', () => {
  it('refuses a call without a gateway assertion', async () => {
    const r = await crm.graphql('{ parties { id } }', {}, null);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
  });

  it('refuses an assertion signed by another key', async () => {
    const res = await fetch(`${crm.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cuadra-assertion': 'eyJhbGciOiJub25lIn0.eyJ3cyI6IndzXzEifQ.' },
      body: JSON.stringify({ query: '{ parties { id } }' }),
    });
    expect(res.status).toBe(401);
  });

  it('answers unknown tools with unknown_tool', async () => {
    expect(await crm.call('parties.explode', {}, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
  });
});
