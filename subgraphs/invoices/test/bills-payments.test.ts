import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetLegacyAdoption, type TestSubgraph } from '@cuadra/shared/testing';
import { startInvoices } from './setup.ts';
import { draftBill, postedBill, vendor, workspace } from './bills-helpers.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const line = (unit_price: number) => [{ description: 'x', account: '5195', quantity: 1, unit_price, tax_rate_ppm: 0 }];

describe('bills.pay', () => {
  it('pays one bill in part, then the rest of it and a second bill in one payment; journal Dr 220505 Cr 111005', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const a = await postedBill(sg, owner, v, { lines: line(1000000) });
    const b = await postedBill(sg, owner, v, { lines: line(250000) });
    const part = await sg.call('bills.pay', { vendor_id: v, amount: 400000, currency: 'COP', date: '2026-11-10', reference: 'TRF-1', bills: [{ bill_id: a.id, amount: 400000 }] }, owner);
    expect(part.output.payment).toMatchObject({ status: 'completed', amount: 400000, bank_account: '111005', allocations: [{ bill_id: a.id, requested: 400000, applied: 400000 }] });
    expect((await sg.call('bills.get', { id: a.id }, owner)).output.bill).toMatchObject({ status: 'partially_paid', paid: 400000, balance: 600000 });
    // The rest of A (600,000) and all of B (250,000): 850,000.
    const rest = await sg.call('bills.pay', { vendor_id: v, amount: 850000, currency: 'COP', date: '2026-11-20', bills: [{ bill_id: a.id }, { bill_id: b.id }] }, owner);
    expect(rest.output.payment.allocations.map((x: any) => x.applied)).toEqual([600000, 250000]);
    const got = await sg.call('bills.get', { id: a.id }, owner);
    expect(got.output.bill).toMatchObject({ status: 'paid', paid: 1000000, balance: 0 });
    expect(got.output.bill.settlements.map((s: any) => [s.date, s.amount])).toEqual([['2026-11-10', 400000], ['2026-11-20', 600000]]);
    expect((await sg.call('bills.get', { id: b.id }, owner)).output.bill).toMatchObject({ status: 'paid', balance: 0 });
    const entry = await sg.db.collection('journal_entries').findOne({ _id: `je_${rest.output.payment.id}` as never });
    expect(entry?.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['220505', 850000, 0], ['111005', 0, 850000]]);
    expect(entry?.lines.reduce((s: number, l: any) => s + l.debit - l.credit, 0)).toBe(0);
    expect(await sg.call('bills.pay', { vendor_id: v, amount: 1, currency: 'COP', bills: [{ bill_id: a.id }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('two payments of one bill at once never overpay: one applies, the other is refused', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const bill = await postedBill(sg, owner, v, { lines: line(700000) });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => sg.call('bills.pay', {
      vendor_id: v, amount: 700000, currency: 'COP', date: '2026-11-10', reference: `T${i}`, bills: [{ bill_id: bill.id }],
    }, owner)));
    expect(answers.filter((r) => r.ok)).toHaveLength(1);
    expect(answers.filter((r) => !r.ok).map((r) => r.code)).toEqual(Array(5).fill('conflict'));
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill).toMatchObject({ status: 'paid', paid: 700000, balance: 0 });
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(1);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'bill_payment' })).toBe(1);
    expect(await sg.db.collection('bill_payment_markers').countDocuments({ workspace: owner.workspace })).toBe(0);
    // Two partial payments at once that together fit both apply, and add up.
    const big = await postedBill(sg, owner, v, { lines: line(1000) });
    const halves = await Promise.all([300, 700].map((amount) => sg.call('bills.pay', { vendor_id: v, amount, currency: 'COP', bills: [{ bill_id: big.id, amount }] }, owner)));
    expect(halves.every((r) => r.ok)).toBe(true);
    expect((await sg.call('bills.get', { id: big.id }, owner)).output.bill).toMatchObject({ status: 'paid', paid: 1000, balance: 0 });
  });

  it('refuses what does not add up, with code and field', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const other = await vendor(owner, 'Otro Proveedor');
    const bill = await postedBill(sg, owner, v, { lines: line(1000) });
    const draft = await draftBill(sg, owner, v);
    const theirs = await postedBill(sg, owner, other, { lines: line(1000) });
    const usd = await postedBill(sg, owner, v, { currency: 'USD', lines: line(1000) });
    const pay = (input: Record<string, unknown>) => sg.call('bills.pay', { vendor_id: v, amount: 1000, currency: 'COP', bills: [{ bill_id: bill.id }], ...input }, owner);
    expect(await pay({ amount: 900 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await pay({ amount: 1100 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await pay({ amount: 1001, bills: [{ bill_id: bill.id, amount: 1001 }] })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await pay({ bills: [{ bill_id: draft.id }] })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await pay({ bills: [{ bill_id: 'bil_nope' }] })).toMatchObject({ ok: false, code: 'not_found' });
    expect(await pay({ bills: [{ bill_id: theirs.id }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bills/0/bill_id' });
    expect(await pay({ bills: [{ bill_id: usd.id }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bills/0/bill_id' });
    expect(await pay({ amount: 1000, bills: [{ bill_id: bill.id, amount: 500 }, { bill_id: bill.id, amount: 500 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bills/1/bill_id' });
    expect(await pay({ vendor_id: 'pty_nobody' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/vendor_id' });
    expect(await pay({ amount: 0 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await pay({ bank_account: '110505' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bank_account' });
    expect(await pay({ bills: [] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bills' });
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill).toMatchObject({ status: 'posted', paid: 0, balance: 1000 });
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(0);
  });

  it('a payment left pending by a dead process is finished once, on the next payment', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const bill = await postedBill(sg, owner, v, { lines: line(5000) });
    const stuck = {
      _id: 'bpy_stuck', workspace: owner.workspace, status: 'pending', vendor_id: v, vendor_name: 'Suministros del Valle SAS', search_lc: 'x', currency: 'COP',
      amount: 2000, date: '2026-11-05', bank_account: '111005', reference: null, allocations: [{ bill_id: bill.id, supplier_number: bill.supplier_number, requested: 2000, applied: null }],
      journal_entry_id: null, pending_rollups: [], pending_count: 0, created_at: new Date(Date.now() - 120_000), updated_at: new Date(Date.now() - 120_000),
    };
    await sg.db.collection('bill_payments').insertOne(stuck as never);
    await sg.db.collection('bill_payment_markers').insertOne({ _id: 'bpy_stuck', workspace: owner.workspace, at: new Date(Date.now() - 120_000) } as never);
    // Data an older version left is adopted at the upgrade, once (operations.ts adoptLegacyStore): this is that upgrade.
    await forgetLegacyAdoption(sg.db);
    const next = await sg.call('bills.pay', { vendor_id: v, amount: 3000, currency: 'COP', bills: [{ bill_id: bill.id, amount: 3000 }] }, owner);
    expect(next.ok).toBe(true);
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill).toMatchObject({ status: 'paid', paid: 5000, balance: 0 });
    expect(await sg.db.collection('bill_payments').findOne({ _id: 'bpy_stuck' as never })).toMatchObject({ status: 'completed', journal_entry_id: 'je_bpy_stuck' });
    expect(await sg.db.collection('bill_payment_markers').countDocuments({ workspace: owner.workspace })).toBe(0);
  });
});
