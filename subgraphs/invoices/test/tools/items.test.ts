import { startInvoices } from '../setup.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

describe('items', () => {
  it('creates, updates, gets, lists and archives; archived items cannot be sold', async () => {
    const owner = testPrincipal();
    const item = (await sg.call('items.create', { name: 'Hora de soporte', kind: 'service', sku: 'SOP-1', price: { amount: 8000000, currency: 'COP' }, tax_rate_ppm: 190000 }, owner)).output.item;
    expect(item).toMatchObject({ unit: 'HUR', status: 'active' });
    const updated = await sg.call('items.update', { id: item.id, price: { amount: 9000000, currency: 'COP' }, tax_rate_ppm: 50000 }, owner);
    expect(updated.output.item).toMatchObject({ price: { amount: 9000000 }, tax_rate_ppm: 50000 });
    expect((await sg.call('items.get', { id: item.id }, owner)).output.item.name).toBe('Hora de soporte');
    expect((await sg.call('items.list', { kind: 'service', status: 'active' }, owner)).output.rows.length).toBe(1);
    expect((await sg.call('items.archive', { id: item.id }, owner)).output.item.status).toBe('archived');
    expect(await sg.call('items.archive', { id: item.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('items.update', { id: item.id, name: 'x' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.create', { customer_id: 'pty_x', currency: 'COP', lines: [{ item_id: item.id, quantity: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('refuses with the right codes', async () => {
    const owner = testPrincipal();
    const a = (await sg.call('items.create', { name: 'A', kind: 'product', sku: 'A-1', price: { amount: 100, currency: 'COP' } }, owner)).output.item;
    await sg.call('items.create', { name: 'B', kind: 'product', sku: 'B-1', price: { amount: 100, currency: 'COP' } }, owner);
    expect(await sg.call('items.update', { id: a.id, sku: 'B-1' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('items.update', { id: a.id }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '' });
    expect(await sg.call('items.update', { id: a.id, tax_rate_ppm: 160000 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/tax_rate_ppm' });
    expect(await sg.call('items.update', { id: 'itm_nope', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('items.get', { id: a.id }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('items.archive', { id: 'itm_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('items.create', { name: 'C', kind: 'product', sku: 'A-1', price: { amount: 1, currency: 'COP' } }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });
});
