import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';

let crm: TestSubgraph;

beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await crm?.close();
});

async function party(owner: ReturnType<typeof testPrincipal>, input: Record<string, unknown>) {
  const r = await crm.call('parties.create', { kind: 'customer', ...input }, owner);
  if (!r.ok) throw new Error(`${r.code} ${r.message}`);
  return r.output.party;
}

describe('parties.update', () => {
  it('changes fields, validates a new NIT and keeps tax ids unique', async () => {
    const owner = testPrincipal();
    const p = await party(owner, { name: 'Andina', tax_id: { type: 'NIT', number: '800197268-4' } });
    const other = await party(owner, { name: 'Otra', tax_id: { type: 'NIT', number: '860002964-4' } });
    const r = await crm.call('parties.update', { id: p.id, name: 'Tienda Andina SAS', tags: ['retail', 'vip'], addresses: [{ line1: 'Cra 7 # 12-34', city: 'Bogotá', country: 'CO' }] }, owner);
    expect(r.output.party).toMatchObject({ name: 'Tienda Andina SAS', tags: ['retail', 'vip'], addresses: [{ city: 'Bogotá' }] });
    expect(await crm.call('parties.update', { id: p.id, tax_id: { type: 'NIT', number: '800197268-9' } }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/tax_id/number' });
    expect(await crm.call('parties.update', { id: other.id, tax_id: { type: 'NIT', number: '800197268-4' } }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await crm.call('parties.update', { id: p.id }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '' });
    expect(await crm.call('parties.update', { id: p.id, kind: 'friend' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/kind' });
    expect(await crm.call('parties.update', { id: 'pty_nope', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await crm.call('parties.update', { id: p.id, name: 'x' }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    expect(await crm.call('parties.update', { id: p.id, name: 'x' }, { ...owner, role: 'viewer' })).toMatchObject({ ok: false, code: 'policy_denied' });
  });
});

describe('parties.archive', () => {
  it('archives once, restores, and refuses changes while archived', async () => {
    const owner = testPrincipal();
    const p = await party(owner, { name: 'Cerrada Ltda' });
    expect((await crm.call('parties.archive', { id: p.id }, owner)).output.party.status).toBe('archived');
    expect(await crm.call('parties.archive', { id: p.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await crm.call('parties.update', { id: p.id, name: 'x' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const archived = (await crm.call('parties.list', { status: 'archived' }, owner)).output;
    expect(archived.rows.map((r: any) => r.id)).toEqual([p.id]);
    expect(archived.total).toBeUndefined(); // filtered lists give no total (CONTRACT §9)
    expect((await crm.call('parties.archive', { id: p.id, restore: true }, owner)).output.party.status).toBe('active');
    expect(await crm.call('parties.archive', { id: 'pty_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });
});

describe('crmRecords (records.list for parties)', () => {
  const query = 'query($q: JSON!) { crmRecords(query: $q) }';

  it('answers {source, rows, total?, next_cursor?} with kind, status, search, limit and cursor', async () => {
    const owner = testPrincipal();
    await party(owner, { name: 'Alfa Comercial', kind: 'customer', email: 'Ventas@Alfa.co' });
    await party(owner, { name: 'Beta Proveedores', kind: 'vendor', tax_id: { type: 'NIT', number: '890900608-9' } });
    const g = await party(owner, { name: 'Gamma Mixta', kind: 'both' });
    await crm.call('parties.archive', { id: g.id }, owner);
    const all = await crm.graphql(query, { q: { source: 'parties' } }, owner);
    expect(all.body.data.crmRecords).toMatchObject({ source: 'parties', total: 3 });
    expect(all.body.data.crmRecords.rows.map((r: any) => r.name)).toEqual(['Gamma Mixta', 'Beta Proveedores', 'Alfa Comercial']);
    const customers = await crm.graphql(query, { q: { source: 'parties', kind: 'customer', status: 'active' } }, owner);
    expect(customers.body.data.crmRecords.rows.map((r: any) => r.name)).toEqual(['Alfa Comercial']);
    expect((await crm.graphql(query, { q: { source: 'parties', search: '890900' } }, owner)).body.data.crmRecords.rows[0]).toMatchObject({ name: 'Beta Proveedores', tax_id: '890900608-9' });
    expect((await crm.graphql(query, { q: { source: 'parties', search: 'ventas@alfa' } }, owner)).body.data.crmRecords).toMatchObject({ rows: [{ name: 'Alfa Comercial' }] });
    const limited = await crm.graphql(query, { q: { source: 'parties', limit: 1 } }, owner);
    expect(limited.body.data.crmRecords).toMatchObject({ total: 3, rows: [{ name: 'Gamma Mixta' }] });
    const next = await crm.graphql(query, { q: { source: 'parties', limit: 2, cursor: limited.body.data.crmRecords.next_cursor } }, owner);
    expect(next.body.data.crmRecords.rows.map((r: any) => r.name)).toEqual(['Beta Proveedores', 'Alfa Comercial']);
    expect(next.body.data.crmRecords.next_cursor).toBeUndefined();
    expect((await crm.graphql(query, { q: { source: 'parties', cursor: 'nope' } }, owner)).body.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_input', field: '/cursor' });
  });

  it('refuses unknown sources, kinds, statuses and limits with invalid_input and a field', async () => {
    const owner = testPrincipal();
    const code = async (q: unknown) => (await crm.graphql(query, { q }, owner)).body.errors?.[0]?.extensions;
    expect(await code({ source: 'employees' })).toMatchObject({ code: 'invalid_input', field: '/source' });
    expect(await code({ source: 'parties', kind: 'friend' })).toMatchObject({ code: 'invalid_input', field: '/kind' });
    expect(await code({ source: 'parties', status: 'gone' })).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await code({ source: 'parties', limit: 101 })).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await code({ source: 'parties', colour: 'red' })).toMatchObject({ code: 'invalid_input', field: '/colour' });
  });

  it('is refused to a key that does not reach parties', async () => {
    const owner = testPrincipal();
    const r = await crm.graphql(query, { q: { source: 'parties' } }, { ...owner, patterns: ['invoices.%'] });
    expect(r.body.errors[0].extensions.code).toBe('policy_denied');
  });
});
