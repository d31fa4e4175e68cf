import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { party, startInvoices } from './setup.ts';
import { draftBill, postedBill, vendor, workspace } from './bills-helpers.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

describe('bills: a bill with VAT and the three withholdings, against a hand calculation', () => {
  it('computes every amount exactly and posts a balanced entry to the PUC accounts', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const r = await sg.call('bills.create', {
      vendor_id: v, supplier_number: 'FE-7781', currency: 'COP', issue_date: '2026-11-03', due_date: '2026-12-03',
      lines: [
        { description: 'Soporte técnico noviembre', account: '5135', quantity: 1, unit_price: 100000000, tax_rate_ppm: 190000 },
        { description: 'Sillas de oficina', account: '1524', quantity: 3, unit_price: 333333, discount_bps: 1000, tax_rate_ppm: 190000 },
      ],
      withholdings: [{ type: 'retefuente', rate_ppm: 25000 }, { type: 'reteiva', rate_ppm: 150000 }, { type: 'reteica', rate_ppm: 9660 }],
    }, owner);
    expect(r.ok).toBe(true);
    const bill = r.output.bill;
    // By hand (cents):
    // line 1: 1 × 100,000,000 = 100,000,000; VAT 19 % = 19,000,000.
    // line 2: 3 × 333,333 × 0.90 = 899,999.1 → 899,999; VAT 899,999 × 0.19 = 170,999.81 → 171,000.
    // subtotal 100,899,999; VAT 19,171,000; total 120,070,999.
    // retefuente 2.5 % per concept of the lines: servicios (5135) 2.5 % × 100,000,000 = 2,500,000;
    //   compras (1524) 2.5 % × 899,999 = 22,499.975 → 22,500; together 2,522,500
    // ReteIVA 15 % × 19,171,000 = 2,875,650
    // ReteICA 9.66 ‰ × 100,899,999 = 974,693.99034 → 974,694
    // withholdings 6,372,844; owed to the vendor 120,070,999 − 6,372,844 = 113,698,155.
    expect(bill.lines.map((l: any) => [l.subtotal, l.tax, l.total])).toEqual([[100000000, 19000000, 119000000], [899999, 171000, 1070999]]);
    expect(bill).toMatchObject({ status: 'draft', subtotal: 100899999, tax_total: 19171000, total: 120070999, withholding_total: 6372844, amount_due: 113698155, balance: 113698155, paid: 0 });
    expect(bill.withholdings).toEqual([
      { type: 'retefuente', rate_ppm: 25000, base: 100000000, amount: 2500000, concept: 'servicios' },
      { type: 'retefuente', rate_ppm: 25000, base: 899999, amount: 22500, concept: 'compras' },
      { type: 'reteiva', rate_ppm: 150000, base: 19171000, amount: 2875650 },
      { type: 'reteica', rate_ppm: 9660, base: 100899999, amount: 974694 },
    ]);
    expect(bill.journal_entry_id).toBeNull();

    const posted = await sg.call('bills.post', { id: bill.id }, owner);
    expect(posted.output.bill).toMatchObject({ status: 'posted', journal_entry_id: `je_${bill.id}` });
    const got = await sg.call('bills.get', { id: bill.id }, owner);
    const entry = got.output.journal_entry;
    expect(entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([
      ['5135', 100000000, 0], ['1524', 899999, 0], ['240810', 19171000, 0],
      // Retención en la fuente to the sub-account of each concept: 236525 servicios, 236540 compras.
      ['220505', 0, 113698155], ['236525', 0, 2500000], ['236540', 0, 22500], ['236740', 0, 2875650], ['236801', 0, 974694],
    ]);
    const debits = entry.lines.reduce((s: number, l: any) => s + l.debit, 0);
    const credits = entry.lines.reduce((s: number, l: any) => s + l.credit, 0);
    expect(debits).toBe(120070999);
    expect(credits).toBe(debits);
    expect(entry).toMatchObject({ date: '2026-11-03', currency: 'COP', source: { kind: 'bill', id: bill.id }, total_debit: debits, total_credit: credits });
    expect(entry.lines.find((l: any) => l.account === '220505').party_id).toBe(v);
  });
});

describe('bills.create, update, post, void, get, list: refusals with code and field', () => {
  it('refuses bad input at the offending field', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const base = { vendor_id: v, supplier_number: 'FE-1', currency: 'COP', lines: [{ description: 'x', account: '5135', quantity: 1, unit_price: 100 }] };
    const create = (over: Record<string, unknown>) => sg.call('bills.create', { ...base, ...over }, owner);
    expect(await create({ vendor_id: 'pty_nobody' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    const customer = await party(owner, { name: 'Solo Cliente SAS', kind: 'customer' });
    expect(await create({ vendor_id: customer })).toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    expect(await create({ lines: [{ description: 'x', account: '4135', quantity: 1, unit_price: 100 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
    expect(await create({ lines: [{ description: 'x', account: '5135', quantity: 1.0000001, unit_price: 100 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/quantity' });
    expect(await create({ lines: [{ description: 'x', account: '5135', quantity: 1, unit_price: 1.5 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/unit_price' });
    expect(await create({ lines: [{ description: 'x', account: '5135', quantity: 1, unit_price: 100, tax_rate_ppm: 160000 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_rate_ppm' });
    expect(await create({ lines: [{ description: 'x', account: '5135', quantity: 1e9, unit_price: 1e15 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0' });
    expect(await create({ lines: [] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines' });
    expect(await create({ currency: 'cop' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/currency' });
    expect(await create({ supplier_number: '' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/supplier_number' });
    expect(await create({ issue_date: '2026-11-10', due_date: '2026-11-09' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/due_date' });
    expect(await create({ withholdings: [{ type: 'retefuente', rate_ppm: 25000 }, { type: 'retefuente', rate_ppm: 40000 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/withholdings/1/type' });
    expect(await create({ withholdings: [{ type: 'retefuente', rate_ppm: 1000001 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/withholdings/0/rate_ppm' });
    expect(await create({ surprise: 1 })).toMatchObject({ ok: false, code: 'invalid_input' });
    // Nothing was written by any refusal.
    expect(await sg.db.collection('bills').countDocuments({ workspace: owner.workspace })).toBe(0);
  });

  it('refuses a second bill for the same vendor invoice number (409), also under concurrent creates; voiding frees it', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const other = await vendor(owner, 'Otro Proveedor SAS', 'both');
    const first = await draftBill(sg, owner, v, { supplier_number: 'FE-100' });
    expect(await sg.call('bills.create', { vendor_id: v, supplier_number: 'fe-100 ', currency: 'COP', lines: [{ description: 'x', account: '5195', quantity: 1, unit_price: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/supplier_number' });
    expect(await sg.call('bills.create', { vendor_id: v, supplier_number: 'fe-100', currency: 'COP', lines: [{ description: 'x', account: '5195', quantity: 1, unit_price: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'conflict' });
    // Another vendor may use the same number.
    expect((await draftBill(sg, owner, other, { supplier_number: 'FE-100' })).status).toBe('draft');
    const racing = await Promise.all(Array.from({ length: 5 }, () => sg.call('bills.create', {
      vendor_id: v, supplier_number: 'FE-200', currency: 'COP', lines: [{ description: 'x', account: '5195', quantity: 1, unit_price: 1 }],
    }, owner)));
    expect(racing.filter((r) => r.ok)).toHaveLength(1);
    expect(racing.filter((r) => !r.ok).map((r) => r.code)).toEqual(Array(4).fill('conflict'));
    // Changing a draft onto a taken number is refused too.
    const second = await draftBill(sg, owner, v, { supplier_number: 'FE-300' });
    expect(await sg.call('bills.update', { id: second.id, supplier_number: 'FE-100' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const voided = await sg.call('bills.void', { id: first.id }, owner);
    expect(voided.output.bill).toMatchObject({ status: 'void', balance: 0 });
    expect((await draftBill(sg, owner, v, { supplier_number: 'FE-100' })).status).toBe('draft');
  });

  it('edits drafts only; posts once; voids drafts only; unknown ids are not_found', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const d = await draftBill(sg, owner, v);
    const edited = await sg.call('bills.update', { id: d.id, lines: [{ description: 'Arriendo', account: '5120', quantity: 2, unit_price: 50000, tax_rate_ppm: 0 }], withholdings: [{ type: 'retefuente', rate_ppm: 35000 }] }, owner);
    // 2 × 50,000 = 100,000; no VAT; retefuente 3.5 % = 3,500; owed 96,500.
    expect(edited.output.bill).toMatchObject({ subtotal: 100000, tax_total: 0, total: 100000, withholding_total: 3500, amount_due: 96500, balance: 96500 });
    expect(await sg.call('bills.update', { id: d.id }, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
    expect(await sg.call('bills.update', { id: d.id, due_date: '2026-10-01' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/due_date' });
    expect(await sg.call('bills.update', { id: d.id, vendor_id: await party(owner, { name: 'C', kind: 'customer' }) }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    const twice = await Promise.all([sg.call('bills.post', { id: d.id }, owner), sg.call('bills.post', { id: d.id }, owner)]);
    expect(twice.filter((r) => r.ok)).toHaveLength(1);
    expect(twice.find((r) => !r.ok)).toMatchObject({ code: 'conflict' });
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace })).toBe(1);
    expect(await sg.call('bills.post', { id: d.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('bills.update', { id: d.id, notes: 'x' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('bills.void', { id: d.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    for (const tool of ['bills.get', 'bills.post', 'bills.void']) expect(await sg.call(tool, { id: 'bil_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('bills.update', { id: 'bil_nope', notes: 'x' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('bills.list', { status: 'sent' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/status' });
    expect(await sg.call('bills.list', { cursor: 'nonsense' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/cursor' });
  });

  it('lists newest first in bounded pages, filtered by status, vendor and search with the same test', async () => {
    const owner = workspace();
    const a = await vendor(owner, 'Papelería Central');
    const b = await vendor(owner, 'Transportes Río');
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await draftBill(sg, owner, i % 2 ? b : a, { supplier_number: `N-${i}` }));
    await sg.call('bills.post', { id: made[0].id }, owner);
    const page1 = await sg.call('bills.list', { limit: 2 }, owner);
    expect(page1.output.rows.map((r: any) => r.supplier_number)).toEqual(['N-4', 'N-3']);
    expect(page1.output.total).toBe(5);
    const page2 = await sg.call('bills.list', { limit: 2, cursor: page1.output.next_cursor }, owner);
    expect(page2.output.rows.map((r: any) => r.supplier_number)).toEqual(['N-2', 'N-1']);
    const page3 = await sg.call('bills.list', { limit: 2, cursor: page2.output.next_cursor }, owner);
    expect(page3.output.rows.map((r: any) => r.supplier_number)).toEqual(['N-0']);
    expect(page3.output.next_cursor).toBeUndefined();
    expect((await sg.call('bills.list', { status: 'posted' }, owner)).output.rows.map((r: any) => r.id)).toEqual([made[0].id]);
    expect((await sg.call('bills.list', { vendor_id: b }, owner)).output.rows.map((r: any) => r.supplier_number)).toEqual(['N-3', 'N-1']);
    expect((await sg.call('bills.list', { search: 'RÍO' }, owner)).output.rows).toHaveLength(2);
    expect((await sg.call('bills.list', { search: 'n-2' }, owner)).output.rows.map((r: any) => r.supplier_number)).toEqual(['N-2']);
  });

  it('seals every bill to its workspace', async () => {
    const owner = workspace();
    const stranger = workspace();
    const bill = await postedBill(sg, owner, await vendor(owner));
    const draft = await draftBill(sg, owner, await vendor(owner, 'Otro'));
    expect(await sg.call('bills.get', { id: bill.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('bills.post', { id: draft.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('bills.update', { id: draft.id, notes: 'mine' }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('bills.void', { id: draft.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect((await sg.call('bills.list', {}, stranger)).output.rows).toEqual([]);
    // A vendor of another workspace is not a party here.
    expect(await sg.call('bills.create', { vendor_id: bill.vendor_id, supplier_number: 'X', currency: 'COP', lines: [{ description: 'x', account: '5135', quantity: 1, unit_price: 1 }] }, stranger))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    expect(await sg.call('bills.pay', { vendor_id: bill.vendor_id, amount: 1, currency: 'COP', bills: [{ bill_id: bill.id }] }, stranger))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    expect((await sg.call('bills.get', { id: draft.id }, owner)).output.bill).toMatchObject({ status: 'draft', notes: null });
  });
});
