import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPositioned } from '@cuadra/shared';
import { checkOutput, type TestSubgraph } from '@cuadra/shared/testing';
import { billCreditMarkers, planCreditNote } from '../src/modules/bills/credit.ts';
import { bills } from '../src/modules/bills/model.ts';
import { creditNote } from '../src/modules/bills/tools/credit_note.ts';
import { draftBill, postedBill, vendor, workspace } from './bills-helpers.ts';
import { startInvoices, unwrap } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});


/**
 * The bill, by hand (cents), issued 2 Nov, due 30 Nov:
 *   0: 10 chairs (1524, asset) × 30,000,000 = 300,000,000; VAT 19 % 57,000,000
 *   1: 4 h maintenance (5145, expense) × 5,000,000 = 20,000,000; VAT 19 % 3,800,000
 *   net 320,000,000; VAT 60,800,000; total 380,800,000
 *   retefuente 2.5 % 8,000,000 (compras 7,500,000 + servicios 500,000); ReteIVA 15 % of VAT 9,120,000; ReteICA 9.66 ‰ 3,091,200
 *   withholdings 20,211,200; owed 360,588,800. Paid 200,000,000 on 3 Nov → open 160,588,800.
 * NC-1 (5 Nov): 3 chairs back: net 90,000,000; VAT 17,100,000; total 107,100,000;
 *   retefuente 2,250,000; ReteIVA 2,565,000; ReteICA 869,400 → 5,684,400; gives back 101,415,600.
 *   Open 160,588,800 − 101,415,600 = 59,173,200.
 * All the rest (7 chairs, 4 h) would give back 259,173,200 > 59,173,200: refused.
 * NC-2 (6 Nov): 2 h of maintenance: net 10,000,000; VAT 1,900,000; total 11,900,000;
 *   retefuente 250,000; ReteIVA 285,000; ReteICA 96,600 → 631,600; gives back 11,268,400.
 *   Open 59,173,200 − 11,268,400 = 47,904,800, paid on 9 Nov → 0.
 */
const BILL = {
  supplier_number: 'FV-300', issue_date: '2026-11-02', due_date: '2026-11-30',
  lines: [
    { description: 'Silla ergonómica', account: '1524', quantity: 10, unit_price: 30000000, tax_rate_ppm: 190000 },
    { description: 'Mantenimiento', account: '5145', quantity: 4, unit_price: 5000000, tax_rate_ppm: 190000 },
  ],
  withholdings: [{ type: 'retefuente', rate_ppm: 25000 }, { type: 'reteiva', rate_ppm: 150000 }, { type: 'reteica', rate_ppm: 9660 }],
};

describe('vendor credit notes', () => {
  it('credits part of a posted, partly paid bill: balance, balanced reversing entry, refusals, retries, metrics and the source', async () => {
    const owner = workspace();
    const v = await vendor(owner, 'Muebles de Oficina SAS');
    const bill = await postedBill(sg, owner, v, BILL);
    expect(bill).toMatchObject({ subtotal: 320000000, tax_total: 60800000, total: 380800000, withholding_total: 20211200, amount_due: 360588800 });
    expect((await sg.call('bills.pay', { vendor_id: v, amount: 200000000, currency: 'COP', date: '2026-11-03', bills: [{ bill_id: bill.id, amount: 200000000 }] }, owner)).ok).toBe(true);

    const r = await sg.call('bills.credit_note', { bill_id: bill.id, supplier_number: 'NC-1', reason: 'Tres sillas devueltas', issue_date: '2026-11-05', lines: [{ line: 0, quantity: 3 }] }, owner);
    expect(r.ok).toBe(true);
    checkOutput('bills.credit_note', creditNote.output, r.output);
    const nc1 = r.output.credit_note;
    expect(nc1).toMatchObject({
      kind: 'credit_note', credit_of: bill.id, status: 'posted', supplier_number: 'NC-1', issue_date: '2026-11-05',
      subtotal: 90000000, tax_total: 17100000, total: 107100000, withholding_total: 5684400, amount_due: 101415600, balance: 0,
    });
    expect(nc1.withholdings).toEqual([
      { type: 'retefuente', rate_ppm: 25000, base: 90000000, amount: 2250000, concept: 'compras' },
      { type: 'reteiva', rate_ppm: 150000, base: 17100000, amount: 2565000 },
      { type: 'reteica', rate_ppm: 9660, base: 90000000, amount: 869400 },
    ]);
    expect(r.output.bill).toMatchObject({ kind: 'invoice', status: 'partially_paid', paid: 200000000, balance: 59173200 });
    expect(r.output.bill.settlements.map((s: any) => [s.ref, s.date, s.amount])).toEqual([[expect.stringMatching(/^bpy_/), '2026-11-03', 200000000], [nc1.id, '2026-11-05', 101415600]]);
    // The reversing entry: Dr 220505 101,415,600 + 236540 2,250,000 + 236740 2,565,000 + 236801 869,400
    // = 107,100,000 = Cr 1524 90,000,000 + 240810 17,100,000.
    const entry = (await sg.call('bills.get', { id: nc1.id }, owner)).output.journal_entry;
    expect(entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([
      ['220505', 101415600, 0], ['236540', 2250000, 0], ['236740', 2565000, 0], ['236801', 869400, 0], ['1524', 0, 90000000], ['240810', 0, 17100000],
    ]);
    expect(entry.source).toEqual({ kind: 'bill_credit_note', id: nc1.id });

    // Refusals, each changing nothing.
    const call = (input: Record<string, unknown>) => sg.call('bills.credit_note', { bill_id: bill.id, supplier_number: 'NC-X', reason: 'x', ...input }, owner);
    expect(await call({})).toMatchObject({ ok: false, code: 'conflict' }); // everything left gives back 259,173,200 > 59,173,200 open
    expect(await call({ lines: [{ line: 0, quantity: 8 }] })).toMatchObject({ ok: false, code: 'conflict' }); // 7 chairs left
    expect(await call({ lines: [{ line: 2, quantity: 1 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/line' });
    expect(await call({ lines: [{ line: 1, quantity: 1 }, { line: 1, quantity: 1 }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1/line' });
    expect(await call({ lines: [{ line: 1, quantity: 1 }], issue_date: '2026-11-01' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await call({ bill_id: nc1.id })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await call({ bill_id: 'bil_nothere' })).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('bills.credit_note', { bill_id: bill.id, supplier_number: 'NC-X', reason: 'x' }, workspace())).toMatchObject({ ok: false, code: 'not_found' });
    const draft = await draftBill(sg, owner, v);
    expect(await call({ bill_id: draft.id })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('bills.pay', { vendor_id: v, amount: 1, currency: 'COP', bills: [{ bill_id: nc1.id, amount: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('bills.post', { id: nc1.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    // The same note again answers the same note and applies nothing more; its number on another bill is refused.
    const again = await sg.call('bills.credit_note', { bill_id: bill.id, supplier_number: 'NC-1', reason: 'Tres sillas devueltas', lines: [{ line: 0, quantity: 3 }] }, owner);
    expect(again.output.credit_note.id).toBe(nc1.id);
    expect(again.output.bill.balance).toBe(59173200);
    const other = await postedBill(sg, owner, v, { supplier_number: 'FV-301', lines: [{ description: 'x', account: '5195', quantity: 1, unit_price: 1000000 }] });
    expect(await sg.call('bills.credit_note', { bill_id: other.id, supplier_number: 'NC-1', reason: 'x' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill).toMatchObject({ balance: 59173200, status: 'partially_paid' });

    // NC-2 as a crash leaves it: the draft note and its marker written, nothing applied. The
    // owner's background sweep finishes it a minute later (the marker is older), exactly once; reads never write.
    const stored = await bills(sg.db).findOne({ _id: bill.id }).lean();
    const nc2 = planCreditNote({ workspace: owner.workspace, now: new Date() }, stored!, { bill_id: bill.id, supplier_number: 'NC-2', reason: 'Dos horas no prestadas', issue_date: '2026-11-06', lines: [{ line: 1, quantity: 2 }] }, 'bil_nc2crash', '2026-11-23');
    await billCreditMarkers(sg.db).create({ _id: nc2._id, workspace: owner.workspace, at: new Date(Date.now() - 5 * 60_000) });
    await createPositioned(bills(sg.db), nc2);
    const metric = async (q: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q }, owner), 'invoicesMetric');
    await sg.sweep();
    const afterCrash = (await sg.call('bills.get', { id: 'bil_nc2crash' }, owner)).output;
    expect(afterCrash.bill).toMatchObject({ status: 'posted', kind: 'credit_note', amount_due: 11268400, withholding_total: 631600, total: 11900000 });
    expect(afterCrash.journal_entry.total_debit).toBe(11900000);
    expect(afterCrash.journal_entry.total_credit).toBe(11900000);
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill).toMatchObject({ balance: 47904800, status: 'partially_paid' });
    await sg.sweep();
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill.balance).toBe(47904800);
    expect(await billCreditMarkers(sg.db).countDocuments({ workspace: owner.workspace })).toBe(0);

    expect((await sg.call('bills.pay', { vendor_id: v, amount: 47904800, currency: 'COP', date: '2026-11-09', bills: [{ bill_id: bill.id }] }, owner)).ok).toBe(true);
    expect((await sg.call('bills.get', { id: bill.id }, owner)).output.bill).toMatchObject({ status: 'paid', balance: 0 });

    // Every entry balances: the bill, two notes, FV-301 and two payments.
    const entries = await sg.db.collection('journal_entries').find({ workspace: owner.workspace }).toArray();
    expect(entries).toHaveLength(6);
    for (const e of entries) expect(e.lines.reduce((s: number, l: any) => s + l.debit - l.credit, 0)).toBe(0);
    const net = (account: string) => entries.flatMap((e: any) => e.lines).filter((l: any) => l.account === account).reduce((s: number, l: any) => s + l.debit - l.credit, 0);
    // 220505: only FV-301 (1,000,000) is owed. Withholdings: 8,000,000 − 2,250,000 − 250,000 = 5,500,000 etc.
    expect(net('220505')).toBe(-1000000);
    // Retención en la fuente by concept: compras (1524) 2.5 % × 300,000,000 = 7,500,000 − 2,250,000 (NC-1); servicios (5145) 2.5 % × 20,000,000 = 500,000 − 250,000 (NC-2).
    expect([net('236540'), net('236525'), net('236740'), net('236801')]).toEqual([-(7500000 - 2250000), -(500000 - 250000), -(9120000 - 2565000 - 285000), -(3091200 - 869400 - 96600)]);
    expect([net('1524'), net('5145'), net('240810')]).toEqual([300000000 - 90000000, 20000000 - 10000000, 60800000 - 17100000 - 1900000]);

    // Metrics (FV-301: 5195 expense 1,000,000, issued today-less: on 2 Nov by the helper's default).
    // Outstanding each day 2–9 Nov: +360,588,800 + 1,000,000; −200,000,000 (3 Nov); −101,415,600 (5 Nov);
    // −11,268,400 (6 Nov); −47,904,800 (9 Nov).
    const out = await metric({ metric: 'ap_outstanding', from: '2026-11-02', to: '2026-11-09', interval: 'day' });
    expect(out.series.map((p: any) => p.value)).toEqual([361588800, 161588800, 161588800, 60173200, 48904800, 48904800, 48904800, 1000000]);
    // Aging at 5 Nov: the bill (due 30 Nov) current 59,173,200 + FV-301 (due 2 Dec) 1,000,000.
    expect((await metric({ metric: 'ap_aging', as_of: '2026-11-05' })).rows[0]).toEqual({ bucket: 'current', value: 60173200 });
    // Expenses: maintenance 20,000,000 − 10,000,000 credited + FV-301 1,000,000; the chairs are assets.
    expect((await metric({ metric: 'expenses', from: '2026-11-01', to: '2026-11-30', interval: 'month' })).summary.value).toBe(11000000);
    // Net bought from the vendor: 320,000,000 − 90,000,000 − 10,000,000 + 1,000,000.
    expect((await metric({ metric: 'top_vendors', from: '2026-11-01', to: '2026-11-30' })).rows).toEqual([{ vendor_id: v, name: 'Muebles de Oficina SAS', value: 221000000 }]);
    // Statuses count bills, not credit notes: FV-300 paid, FV-301 posted, the draft.
    expect((await metric({ metric: 'bills_status', from: '2026-11-01', to: '2026-11-30' })).rows.filter((x: any) => x.count)).toEqual([
      { status: 'draft', count: 1 }, { status: 'posted', count: 1 }, { status: 'paid', count: 1 },
    ]);

    // The bills source lists the notes with their kind.
    const records = async (q: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q }, owner), 'invoicesRecords');
    expect((await records({ source: 'bills', kind: 'credit_note' })).rows.map((x: any) => [x.supplier_number, x.kind, x.credit_of, x.amount_due]).sort()).toEqual([
      ['NC-1', 'credit_note', bill.id, 101415600], ['NC-2', 'credit_note', bill.id, 11268400],
    ]);
    expect((await records({ source: 'bills', kind: 'invoice' })).rows.map((x: any) => x.supplier_number).sort()).toEqual([draft.supplier_number, 'FV-300', 'FV-301'].sort());
    await expect(records({ source: 'bills', kind: 'debit_note' })).rejects.toMatchObject({ code: 'invalid_input', field: '/kind' });
    // The payables lane shows open bills only, never a note.
    const lane = unwrap(await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "payables", window: $w) }', { w: { from: '2026-11-01', to: '2026-12-31', limit: 50 } }, owner), 'invoicesAgenda');
    expect(lane.map((e: any) => [e.title, e.amount])).toEqual([['FV-301 — Muebles de Oficina SAS', 1000000]]);
  });
});
