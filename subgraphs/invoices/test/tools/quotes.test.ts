import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetLegacyAdoption, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { BUYER, andina, startInvoices } from '../setup.ts';

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const quoteInputOf = (customer_id: string) => ({ customer_id, currency: 'COP', lines: [{ description: 'Implementación', quantity: 1, unit_price: 2000000, tax_rate_ppm: 190000 }], withholdings: [{ type: 'retefuente', rate_ppm: 110000 }] });

describe('quotes', () => {
  it('quotes and sales orders share a collection but page as two lists, newest first by cursor', async () => {
    const owner = testPrincipal();
    const quotes: string[] = [];
    for (let i = 0; i < 5; i++) {
      quotes.push((await sg.call('quotes.create', { ...quoteInputOf(await andina(owner)), notes: `q${i}` }, owner)).output.quote.id);
      await sg.call('sales_orders.create', { ...quoteInputOf(await andina(owner)), notes: `o${i}` }, owner);
    }
    const first = (await sg.call('quotes.list', { limit: 3 }, owner)).output;
    expect(first).toMatchObject({ total: 5 });
    const second = (await sg.call('quotes.list', { limit: 3, cursor: first.next_cursor }, owner)).output;
    expect([...first.rows, ...second.rows].map((q: any) => q.id)).toEqual([...quotes].reverse());
    expect(second.next_cursor).toBeUndefined();
    expect((await sg.call('sales_orders.list', {}, owner)).output).toMatchObject({ total: 5 });
    // A quotes cursor is not a sales orders cursor.
    expect(await sg.call('sales_orders.list', { cursor: first.next_cursor }, owner)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    const searched = (await sg.call('quotes.list', { search: 'Q3' }, owner)).output;
    expect(searched.rows.map((q: any) => q.id)).toEqual([quotes[3]]);
    expect(searched.total).toBeUndefined();
  });

  it('goes draft → sent → accepted → converted into a draft invoice, once', async () => {
    const owner = testPrincipal();
    const q = (await sg.call('quotes.create', quoteInputOf(await andina(owner)), owner)).output.quote;
    expect(q).toMatchObject({ status: 'draft', subtotal: 2000000, tax_total: 380000, withholding_total: 220000, amount_due: 2160000 });
    expect(await sg.call('quotes.accept', { id: q.id }, owner)).toMatchObject({ ok: false, code: 'conflict' }); // not sent
    expect(await sg.call('quotes.convert', { id: q.id }, owner)).toMatchObject({ ok: false, code: 'conflict' }); // not accepted
    expect((await sg.call('quotes.send', { id: q.id }, owner)).output.quote.status).toBe('sent');
    expect(await sg.call('quotes.send', { id: q.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('quotes.accept', { id: q.id }, owner)).output.quote.status).toBe('accepted');
    const converted = await sg.call('quotes.convert', { id: q.id }, owner);
    expect(converted.output.quote).toMatchObject({ status: 'converted', converted_to: { kind: 'invoice', id: converted.output.invoice.id } });
    expect(converted.output.invoice).toMatchObject({ status: 'draft', customer: BUYER.name ? { name: BUYER.name } : {}, amount_due: 2160000, source: { quote_id: q.id } });
    expect(await sg.call('quotes.convert', { id: q.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('quotes.list', { status: 'converted' }, owner)).output.rows.length).toBe(1);
    expect(await sg.call('quotes.get', { id: 'quo_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('a declined quote cannot be converted; a quote can become a sales order and the order an invoice', async () => {
    const owner = testPrincipal();
    const declined = (await sg.call('quotes.create', quoteInputOf(await andina(owner)), owner)).output.quote;
    await sg.call('quotes.send', { id: declined.id }, owner);
    expect((await sg.call('quotes.accept', { id: declined.id, decision: 'decline' }, owner)).output.quote.status).toBe('declined');
    expect(await sg.call('quotes.convert', { id: declined.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const q = (await sg.call('quotes.create', quoteInputOf(await andina(owner)), owner)).output.quote;
    await sg.call('quotes.send', { id: q.id }, owner);
    await sg.call('quotes.accept', { id: q.id }, owner);
    const so = (await sg.call('quotes.convert', { id: q.id, to: 'sales_order' }, owner)).output.sales_order;
    expect(so).toMatchObject({ kind: 'sales_order', status: 'open', source: { quote_id: q.id } });
    const inv = await sg.call('sales_orders.convert', { id: so.id }, owner);
    expect(inv.output.invoice).toMatchObject({ status: 'draft', source: { sales_order_id: so.id, quote_id: q.id } });
    expect(await sg.call('sales_orders.convert', { id: so.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('sales_orders.get', { id: so.id }, owner)).output.sales_order.status).toBe('invoiced');
  });

  it('converts once under concurrent calls', async () => {
    const owner = testPrincipal();
    const so = (await sg.call('sales_orders.create', quoteInputOf(await andina(owner)), owner)).output.sales_order;
    const results = await Promise.all(Array.from({ length: 4 }, () => sg.call('sales_orders.convert', { id: so.id }, owner)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
  });

  it('finishes a conversion its process left unfinished, but not one still being written', async () => {
    const owner = testPrincipal();
    const so = (await sg.call('sales_orders.create', quoteInputOf(await andina(owner)), owner)).output.sales_order;
    // What a process killed between its two writes leaves: the order marked, its invoice never written.
    const mark = (updatedAt: Date) => sg.db.collection('sales_documents').updateOne(
      { _id: so.id as never },
      { $set: { status: 'invoiced', converted_to: { kind: 'invoice', id: 'inv_leftbehind' }, updated_at: updatedAt } },
    );
    await mark(new Date());
    expect(await sg.call('sales_orders.convert', { id: so.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(0);
    await mark(new Date(Date.now() - 120_000));
    const finished = await sg.call('sales_orders.convert', { id: so.id }, owner);
    expect(finished.ok).toBe(true);
    expect(finished.output.invoice.id).toBe('inv_leftbehind');
    expect(await sg.call('sales_orders.convert', { id: so.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
  });

  it('a conversion whose call died before writing its target is finished by the sweep, with no call; one the older version left too', async () => {
    const owner = testPrincipal();
    const customer = await andina(owner);
    const old = new Date(Date.now() - 5 * 60_000);
    const docs = sg.db.collection('sales_documents');
    // An order converted under the runner, its call killed after marking it (its marker a lease old; its day 2026-11-20).
    const so = (await sg.call('sales_orders.create', quoteInputOf(customer), owner)).output.sales_order;
    await sg.db.collection('operations').insertOne({ _id: `sales_conversion:${so.id}`, workspace: owner.workspace, kind: 'sales_conversion', record: so.id, run: null, status: 'running', at: old } as never);
    await docs.updateOne({ _id: so.id as never }, { $set: { status: 'invoiced', converted_to: { kind: 'invoice', id: 'inv_diedafter' }, converted_on: '2026-11-20', updated_at: old } });
    // A quote the older version marked converted to an order and died (no day, no marker).
    const q = (await sg.call('quotes.create', quoteInputOf(customer), owner)).output.quote;
    await docs.updateOne({ _id: q.id as never }, { $set: { status: 'converted', converted_to: { kind: 'sales_order', id: 'so_leftbyold' }, updated_at: old } });
    // Data an older version left is adopted at the upgrade, once (operations.ts adoptLegacyStore): this is that upgrade.
    await forgetLegacyAdoption(sg.db);

    await sg.sweep();
    // 2,000,000 + 19 % VAT 380,000 − 11 % retefuente 220,000 = 2,160,000 due; dated the conversion's day, due 30 days later.
    expect((await sg.call('invoices.get', { id: 'inv_diedafter' }, owner)).output.invoice).toMatchObject({
      status: 'draft', issue_date: '2026-11-20', due_date: '2026-12-20', amount_due: 2160000, source: { sales_order_id: so.id },
    });
    expect((await sg.call('sales_orders.get', { id: 'so_leftbyold' }, owner)).output.sales_order).toMatchObject({ status: 'open', amount_due: 2160000, source: { quote_id: q.id } });
    const markers = await sg.db.collection('operations').find({ workspace: owner.workspace, kind: 'sales_conversion' }).toArray();
    expect(markers.map((m) => [m._id, m.status]).sort()).toEqual([[`sales_conversion:${q.id}`, 'done'], [`sales_conversion:${so.id}`, 'done']]);
    // Once: a second pass and a retry write nothing more.
    await sg.sweep();
    expect(await sg.call('sales_orders.convert', { id: so.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
    expect(await docs.countDocuments({ workspace: owner.workspace, kind: 'sales_order' })).toBe(2);
  });

  it('refuses bad input', async () => {
    const owner = testPrincipal();
    expect(await sg.call('quotes.create', { ...quoteInputOf(await andina(owner)), valid_until: '2000-01-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/valid_until' });
    expect(await sg.call('quotes.create', { ...quoteInputOf(await andina(owner)), lines: [] }, owner)).toMatchObject({ code: 'invalid_input', field: '/lines' });
    expect(await sg.call('quotes.convert', { id: 'quo_x', to: 'bill' }, owner)).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect(await sg.call('sales_orders.create', { ...quoteInputOf(await andina(owner)), valid_until: '2027-01-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/valid_until' });
  });
});
