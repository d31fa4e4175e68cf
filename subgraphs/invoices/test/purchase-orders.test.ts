import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { draftBill, vendor, workspace } from './bills-helpers.ts';
import { party, startInvoices, unwrap } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});


/**
 * Two lines. Hand figures:
 * 0: 10 × 12,500.00 (goods, 1435) = 125,000.00 + 19 % VAT 23,750.00 = 148,750.00
 * 1: 2.5 h × 80,000.00 (services, 5135) = 200,000.00, no VAT
 * Order total 348,750.00 = 34,875,000 cents.
 */
const LINES = [
  { description: 'Resmas de papel', account: '1435', quantity: 10, unit_price: 1250000, tax_rate_ppm: 190000 },
  { description: 'Instalación', account: '5135', quantity: 2.5, unit_price: 8000000 },
];

describe('purchase orders: create, send, receive in part, convert to a draft bill', () => {
  it('an order of two lines received partially (exact quantities), then converted: the bill holds what was received', async () => {
    const owner = workspace();
    const v = await vendor(owner, 'Papelería Central SAS');
    const created = await sg.call('purchase_orders.create', { vendor_id: v, currency: 'COP', order_date: '2026-11-02', expected_date: '2026-11-09', lines: LINES, notes: 'Pedido noviembre' }, owner);
    const po = created.output.purchase_order;
    expect(po).toMatchObject({ status: 'draft', vendor_name: 'Papelería Central SAS', subtotal: 32500000, tax_total: 2375000, total: 34875000 });
    expect(po.lines.map((l: any) => [l.subtotal, l.tax, l.total, l.received, l.outstanding])).toEqual([[12500000, 2375000, 14875000, 0, 10], [20000000, 0, 20000000, 0, 2.5]]);

    expect(await sg.call('purchase_orders.receive', { id: po.id, lines: [{ line: 0, quantity: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-1' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('purchase_orders.send', { id: po.id }, owner)).output.purchase_order.status).toBe('sent');
    expect(await sg.call('purchase_orders.send', { id: po.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-1' }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    const r1 = await sg.call('purchase_orders.receive', { id: po.id, date: '2026-11-05', lines: [{ line: 0, quantity: 4 }, { line: 1, quantity: 1.25 }] }, owner);
    expect(r1.output.purchase_order.status).toBe('partially_received');
    expect(r1.output.purchase_order.lines.map((l: any) => [l.received, l.outstanding])).toEqual([[4, 6], [1.25, 1.25]]);
    // 4 + 2.5 + 0.1 + 0.2 = 6.8 exactly (as floats 6.5 + 0.1 + 0.2 would be 6.800000000000001).
    await sg.call('purchase_orders.receive', { id: po.id, date: '2026-11-06', lines: [{ line: 0, quantity: 2.5 }] }, owner);
    await sg.call('purchase_orders.receive', { id: po.id, date: '2026-11-07', lines: [{ line: 0, quantity: 0.1 }] }, owner);
    const r4 = await sg.call('purchase_orders.receive', { id: po.id, date: '2026-11-07', lines: [{ line: 0, quantity: 0.2 }] }, owner);
    expect(r4.output.purchase_order.lines.map((l: any) => [l.received, l.outstanding])).toEqual([[6.8, 3.2], [1.25, 1.25]]);
    expect(r4.output.purchase_order.receipts.map((r: any) => r.date)).toEqual(['2026-11-05', '2026-11-06', '2026-11-07', '2026-11-07']);
    // More than ordered is refused: 1.25 of 2.5 open on line 1, so 1.250001 does not fit.
    expect(await sg.call('purchase_orders.receive', { id: po.id, lines: [{ line: 1, quantity: 1.250001 }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/quantity' });

    // Convert: what was received, at the ordered prices.
    // 0: 6.8 × 12,500.00 = 85,000.00 + 19 % 16,150.00 = 101,150.00; 1: 1.25 × 80,000.00 = 100,000.00.
    // Bill: subtotal 185,000.00, VAT 16,150.00, total 201,150.00 (20,115,000 cents).
    const converted = await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-9001', issue_date: '2026-11-08', due_date: '2026-12-08' }, owner);
    expect(converted.output.purchase_order).toMatchObject({ status: 'billed', bill_id: converted.output.bill.id });
    const bill = converted.output.bill;
    expect(bill).toMatchObject({ status: 'draft', vendor_id: v, supplier_number: 'FV-9001', subtotal: 18500000, tax_total: 1615000, total: 20115000, amount_due: 20115000, due_date: '2026-12-08' });
    expect(bill.lines.map((l: any) => [l.account, l.quantity, l.unit_price, l.subtotal, l.tax])).toEqual([['1435', 6.8, 1250000, 8500000, 1615000], ['5135', 1.25, 8000000, 10000000, 0]]);
    // The bill is the bills module's own: it posts through bills.post.
    expect((await sg.call('bills.post', { id: bill.id }, owner)).output.bill.status).toBe('posted');
    // Once only; a billed order takes no receipts.
    expect(await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-9002' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('purchase_orders.receive', { id: po.id, lines: [{ line: 0, quantity: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.db.collection('bills').countDocuments({ workspace: owner.workspace })).toBe(1);
  });

  it('a conversion refused by the bills path leaves the order as it was; an interrupted one is finished once', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    await draftBill(sg, owner, v, { supplier_number: 'FV-1' });
    const po = (await sg.call('purchase_orders.create', { vendor_id: v, currency: 'COP', lines: LINES }, owner)).output.purchase_order;
    await sg.call('purchase_orders.send', { id: po.id }, owner);
    await sg.call('purchase_orders.receive', { id: po.id, lines: [{ line: 0, quantity: 10 }, { line: 1, quantity: 2.5 }] }, owner);
    expect(await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-1' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('purchase_orders.get', { id: po.id }, owner)).output.purchase_order).toMatchObject({ status: 'received', bill_id: null });
    // As if a process died after choosing the bill's id: the next convert writes that bill, once.
    await sg.db.collection('purchase_orders').updateOne({ _id: po.id as never }, {
      $set: { status: 'billed', bill_id: `bil_${po.id}`, conversion: { supplier_number: 'FV-2', issue_date: null, due_date: null, from: 'received' } },
    });
    const answers = await Promise.all([1, 2].map(() => sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-2' }, owner)));
    expect(answers.some((r) => r.ok)).toBe(true);
    const again = await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'FV-2' }, owner);
    expect(again).toMatchObject({ ok: false, code: 'conflict' });
    const made = await sg.call('bills.get', { id: `bil_${po.id}` }, owner);
    expect(made.output.bill).toMatchObject({ supplier_number: 'FV-2', total: 34875000 });
    expect(await sg.db.collection('bills').countDocuments({ workspace: owner.workspace })).toBe(2);
  });

  it('refuses with code and field, closes, is sealed per workspace, and answers the purchase_orders source', async () => {
    const owner = workspace();
    const v = await vendor(owner, 'Ferretería El Clavo');
    const customer = await party(owner, { name: 'Cliente SAS', kind: 'customer' });
    const create = (input: Record<string, unknown>) => sg.call('purchase_orders.create', { vendor_id: v, currency: 'COP', lines: LINES, ...input }, owner);
    expect(await create({ vendor_id: customer })).toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    expect(await create({ lines: [{ ...LINES[0], account: '4135' }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
    expect(await create({ lines: [] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines' });
    expect(await create({ order_date: '2026-11-10', expected_date: '2026-11-01' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/expected_date' });
    const po = (await create({ notes: 'Tornillos' })).output.purchase_order;
    await sg.call('purchase_orders.send', { id: po.id }, owner);
    const receive = (lines: unknown) => sg.call('purchase_orders.receive', { id: po.id, lines }, owner);
    expect(await receive([{ line: 5, quantity: 1 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/line' });
    expect(await receive([{ line: 0, quantity: 1 }, { line: 0, quantity: 1 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1/line' });
    expect(await receive([{ line: 0, quantity: 1.0000001 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/quantity' });
    expect(await receive([{ line: 0, quantity: 0 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/quantity' });
    expect((await sg.call('purchase_orders.get', { id: po.id }, owner)).output.purchase_order.receipts).toEqual([]);
    expect((await sg.call('purchase_orders.receive', { id: 'po_nope', lines: [{ line: 0, quantity: 1 }] }, owner))).toMatchObject({ ok: false, code: 'not_found' });

    const stranger = workspace();
    expect(await sg.call('purchase_orders.get', { id: po.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('purchase_orders.receive', { id: po.id, lines: [{ line: 0, quantity: 1 }] }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('purchase_orders.convert', { id: po.id, supplier_number: 'X-1' }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect((await sg.call('purchase_orders.list', {}, stranger)).output).toEqual({ rows: [], total: 0 });

    const records = async (query: Record<string, unknown>, who = owner) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, who), 'invoicesRecords');
    expect((await records({ source: 'purchase_orders' })).rows.map((r: any) => [r.id, r.status, r.total, r.vendor_name])).toEqual([[po.id, 'sent', 34875000, 'Ferretería El Clavo']]);
    expect((await records({ source: 'purchase_orders', search: 'tornillos' })).rows).toHaveLength(1);
    expect((await records({ source: 'purchase_orders', status: 'billed' })).rows).toHaveLength(0);
    await expect(records({ source: 'purchase_orders', status: 'paid' })).rejects.toMatchObject({ code: 'invalid_input', field: '/status' });
    expect((await records({ source: 'purchase_orders' }, stranger)).rows).toEqual([]);
    expect((await sg.call('purchase_orders.list', { status: 'sent' }, owner)).output.rows.map((r: any) => r.id)).toEqual([po.id]);

    expect((await sg.call('purchase_orders.close', { id: po.id }, owner)).output.purchase_order.status).toBe('closed');
    expect(await sg.call('purchase_orders.receive', { id: po.id, lines: [{ line: 0, quantity: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('purchase_orders.close', { id: po.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });
});
