// Issue 31, finding 2: a bill held by an approved or exported payment run is paid by the bank
// file; every other path that settles it (bills.pay, bank reconciliation, a vendor credit note,
// another run) is refused 409 naming the run until the run is confirmed or cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { forgetLegacyAdoption, type TestSubgraph } from '@cuadra/shared/testing';
import { bankAccount, camt053 } from './bank-helpers.ts';
import { postedBill, workspace } from './bills-helpers.ts';
import { party, startInvoices } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const DEBTOR = { name: 'Cuadra Demo SAS', tax_id: '900373115', account_number: '12345678901', account_type: 'checking', bic: 'COLOCOBM' };
const IBAN = 'CO12345678901234';

/**
 * One vendor and two bills of it. By hand: FE-1 = 1 × 1,000,000.00 COP + 19 % VAT 190,000.00 =
 * 1,190,000.00 (119,000,000 cents); FE-2 = 1 × 500,000.00, no VAT (50,000,000 cents).
 */
async function setUp(owner: Principal) {
  const v = await party(owner, { name: 'Suministros Andinos SAS', kind: 'vendor', tax_id: { type: 'NIT', number: '800197268-4' } });
  const payees = [{ vendor_id: v, account_number: '00112233445', account_type: 'savings', bank_code: '5600078', bic: 'COLOCOBM' }];
  const lines = (unit_price: number, tax_rate_ppm = 0) => [{ description: 'Compra', account: '5195', quantity: 1, unit_price, tax_rate_ppm }];
  const fe1 = await postedBill(sg, owner, v, { supplier_number: 'FE-1', issue_date: '2026-10-10', due_date: '2026-11-10', lines: lines(100000000, 190000) });
  const fe2 = await postedBill(sg, owner, v, { supplier_number: 'FE-2', issue_date: '2026-10-11', due_date: '2026-11-11', lines: lines(50000000) });
  expect([fe1.balance, fe2.balance]).toEqual([119000000, 50000000]);
  return { v, payees, fe1, fe2 };
}

async function run(owner: Principal, payees: unknown[], billIds: string[]) {
  const r = await sg.call('payment_runs.create', { currency: 'COP', bank_account: '111005', bill_ids: billIds, payment_date: '2026-11-21', debtor: DEBTOR, payees }, owner);
  if (!r.ok) throw new Error(`payment_runs.create failed: ${r.code} ${r.field} ${r.message}`);
  return r.output.payment_run;
}

const bill = async (owner: Principal, id: string) => (await sg.call('bills.get', { id }, owner)).output.bill;
const settlementsOf = async (id: string) => ((await sg.db.collection('bills').findOne({ _id: id as never }))?.settlements ?? []) as { ref: string; amount: number }[];

describe('a bill held by a payment run is paid once', () => {
  it('approved, then exported: bills.pay, a bank reconciliation and a credit note are refused 409 naming the run; nothing is written', async () => {
    const owner = workspace();
    const t = await setUp(owner);
    const r = await run(owner, t.payees, [t.fe1.id]);
    expect((await sg.call('payment_runs.approve', { id: r.id, amount: r.total }, owner)).ok).toBe(true);
    const pay = () => sg.call('bills.pay', { vendor_id: t.v, amount: 119000000, currency: 'COP', date: '2026-11-20', bills: [{ bill_id: t.fe1.id }] }, owner);

    // Approved: the money is committed to the run.
    const refusedApproved = await pay();
    expect(refusedApproved).toMatchObject({ ok: false, code: 'conflict', httpStatus: 409 });
    expect(refusedApproved.message).toContain(r.id);
    expect((await bill(owner, t.fe1.id)).payment_run_id).toBe(r.id);

    // Exported: the bank file (pain.001) was handed over; every other path stays closed.
    expect((await sg.call('payment_runs.export', { id: r.id, format: 'pain.001.001.03' }, owner)).ok).toBe(true);
    const refusedExported = await pay();
    expect(refusedExported).toMatchObject({ ok: false, code: 'conflict' });
    expect(refusedExported.message).toContain(r.id);
    // Part of it too.
    expect(await sg.call('bills.pay', { vendor_id: t.v, amount: 100, currency: 'COP', bills: [{ bill_id: t.fe1.id, amount: 100 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    // A vendor credit note would lower what is owed below what the bank pays: refused as well.
    const credit = await sg.call('bills.credit_note', { bill_id: t.fe1.id, supplier_number: 'NC-1', reason: 'Devolución', issue_date: '2026-11-12' }, owner);
    expect(credit).toMatchObject({ ok: false, code: 'conflict' });
    expect(credit.message).toContain(r.id);

    // A bank statement line matched to the bill: refused before anything is booked.
    const bank = await bankAccount(sg, owner, { account_number: IBAN });
    const statement = camt053({ id: 'S-1', iban: IBAN, currency: 'COP', entries: [{ ref: 'O-1', amount: '1190000.00', sign: 'DBIT', date: '2026-11-21', info: 'Pago FE-1' }] });
    expect((await sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', content: statement }, owner)).ok).toBe(true);
    const tx = await sg.db.collection('bank_transactions').findOne({ workspace: owner.workspace, entry_id: 'O-1' });
    const rec = await sg.call('bank.reconcile', { transaction_id: tx!._id, matches: [{ bill_id: t.fe1.id, amount: 119000000 }] }, owner);
    expect(rec).toMatchObject({ ok: false, code: 'conflict' });
    expect(rec.message).toContain(r.id);
    expect((await sg.db.collection('bank_transactions').findOne({ _id: tx!._id }))?.status).toBe('unreconciled');

    // Nothing was written by any refused path: no payment, no entry, no note, the bill untouched.
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(0);
    expect(await sg.db.collection('bill_payment_markers').countDocuments({ workspace: owner.workspace })).toBe(0);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': { $in: ['bill_payment', 'bill_credit_note'] } })).toBe(0);
    expect(await sg.db.collection('bills').countDocuments({ workspace: owner.workspace, kind: 'credit_note' })).toBe(0);
    expect(await bill(owner, t.fe1.id)).toMatchObject({ status: 'posted', paid: 0, balance: 119000000 });
    // The other bill of the vendor, in no run, is paid as usual.
    expect((await sg.call('bills.pay', { vendor_id: t.v, amount: 50000000, currency: 'COP', bills: [{ bill_id: t.fe2.id }] }, owner)).ok).toBe(true);

    // Confirm pays it exactly once, through the run's own payment; afterwards the bill is free (and paid).
    const confirmed = await sg.call('payment_runs.confirm', { id: r.id, paid_on: '2026-11-21' }, owner);
    expect(confirmed.output.payment_run.status).toBe('confirmed');
    expect(await bill(owner, t.fe1.id)).toMatchObject({ status: 'paid', paid: 119000000, balance: 0, payment_run_id: null });
    expect((await settlementsOf(t.fe1.id)).map((s) => s.ref)).toEqual([r.lines[0].payment_id]);
  });

  it('cancelling an exported run releases its bills and says what the bank may still pay; a draft run holds nothing', async () => {
    const owner = workspace();
    const t = await setUp(owner);
    const r = await run(owner, t.payees, [t.fe1.id, t.fe2.id]);
    // Draft: nothing is committed yet. Paying a bill of it makes the run's approval fail instead.
    expect((await sg.call('bills.pay', { vendor_id: t.v, amount: 1000, currency: 'COP', bills: [{ bill_id: t.fe2.id, amount: 1000 }] }, owner)).ok).toBe(true);
    const stale = await sg.call('payment_runs.approve', { id: r.id, amount: r.total }, owner);
    expect(stale).toMatchObject({ ok: false, code: 'conflict' });
    expect(stale.message).toContain('FE-2');
    expect((await sg.call('payment_runs.get', { id: r.id }, owner)).output.payment_run.status).toBe('draft');
    // The refused approval left no bill held.
    expect((await bill(owner, t.fe1.id)).payment_run_id).toBeNull();
    expect((await sg.call('payment_runs.cancel', { id: r.id }, owner)).output.bank_may_still_pay).toBeNull();

    const r2 = await run(owner, t.payees, [t.fe1.id]);
    await sg.call('payment_runs.approve', { id: r2.id, amount: r2.total }, owner);
    await sg.call('payment_runs.export', { id: r2.id, format: 'bancolombia_pab' }, owner);
    const cancelled = await sg.call('payment_runs.cancel', { id: r2.id }, owner);
    expect(cancelled.output.payment_run.status).toBe('cancelled');
    // 1,190,000.00 COP in one transfer, named by the bank file's own references.
    expect(cancelled.output.bank_may_still_pay).toMatchObject({
      currency: 'COP', total: 119000000, count: 1, formats: ['bancolombia_pab'],
      transfers: [{ bill_id: t.fe1.id, supplier_number: 'FE-1', vendor_name: 'Suministros Andinos SAS', amount: 119000000, reference: r2.lines[0].payment_id }],
    });
    expect(cancelled.output.bank_may_still_pay.warning).toMatch(/bank/i);
    // Released: the bill takes a payment again.
    expect((await bill(owner, t.fe1.id)).payment_run_id).toBeNull();
    expect((await sg.call('bills.pay', { vendor_id: t.v, amount: 119000000, currency: 'COP', bills: [{ bill_id: t.fe1.id }] }, owner)).ok).toBe(true);
  });

  it('a hold left by a run cancelled or confirmed in a process that died is not in the way', async () => {
    const owner = workspace();
    const t = await setUp(owner);
    const r = await run(owner, t.payees, [t.fe1.id]);
    await sg.call('payment_runs.approve', { id: r.id, amount: r.total }, owner);
    // As if a cancel died after the run became cancelled and before its bills were released.
    await sg.db.collection('payment_runs').updateOne({ _id: r.id as never }, { $set: { status: 'cancelled' } });
    expect((await bill(owner, t.fe1.id)).payment_run_id).toBe(r.id);
    expect((await sg.call('bills.pay', { vendor_id: t.v, amount: 119000000, currency: 'COP', bills: [{ bill_id: t.fe1.id }] }, owner)).ok).toBe(true);
    expect(await bill(owner, t.fe1.id)).toMatchObject({ status: 'paid', payment_run_id: null });
  });

  it('a payment of a free bill and a held one is refused whole (nothing applied to the free one); an approval that died half-way holds until approved or cancelled', async () => {
    const owner = workspace();
    const t = await setUp(owner);
    const r = await run(owner, t.payees, [t.fe1.id]);
    await sg.call('payment_runs.approve', { id: r.id, amount: r.total }, owner);
    const both = await sg.call('bills.pay', { vendor_id: t.v, amount: 169000000, currency: 'COP', bills: [{ bill_id: t.fe2.id }, { bill_id: t.fe1.id }] }, owner);
    expect(both).toMatchObject({ ok: false, code: 'conflict' });
    expect(await bill(owner, t.fe2.id)).toMatchObject({ status: 'posted', paid: 0, balance: 50000000 });
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(0);

    // A payment recorded before the hold and left pending by a process that died: its completion
    // meets the hold in the bill's own write (not only in the early check) and is refused; the
    // pending payment is discarded, and it blocks no other payment of the workspace.
    const stale = new Date(Date.now() - 5 * 60_000);
    await sg.db.collection('bill_payment_markers').insertOne({ _id: 'bpy_died', workspace: owner.workspace, at: stale } as never);
    // Data an older version left is adopted at the upgrade, once (operations.ts adoptLegacyStore): this is that upgrade.
    await forgetLegacyAdoption(sg.db);
    await sg.db.collection('bill_payments').insertOne({
      _id: 'bpy_died', workspace: owner.workspace, status: 'pending', vendor_id: t.v, vendor_name: 'Suministros Andinos SAS', search_lc: 'x', currency: 'COP',
      amount: 119000000, date: '2026-11-20', bank_account: '111005', reference: null, allocations: [{ bill_id: t.fe1.id, supplier_number: 'FE-1', requested: 119000000, applied: null }],
      journal_entry_id: null, pending_rollups: [], pending_count: 0, created_at: stale, updated_at: stale,
    } as never);
    expect((await sg.call('bills.pay', { vendor_id: t.v, amount: 1000, currency: 'COP', bills: [{ bill_id: t.fe2.id, amount: 1000 }] }, owner)).ok).toBe(true);
    expect(await sg.db.collection('bill_payments').countDocuments({ _id: 'bpy_died' as never })).toBe(0);
    expect(await sg.db.collection('bill_payment_markers').countDocuments({ _id: 'bpy_died' as never })).toBe(0);
    expect(await bill(owner, t.fe1.id)).toMatchObject({ status: 'posted', paid: 0, payment_run_id: r.id });
    expect(await bill(owner, t.fe2.id)).toMatchObject({ paid: 1000, balance: 49999000 });

    // As if an approval died after holding FE-2 and before the run left draft.
    const r2 = await run(owner, t.payees, [t.fe2.id]);
    await sg.db.collection('bills').updateOne({ _id: t.fe2.id as never }, { $set: { run_hold: { run_id: r2.id, payment_id: r2.lines[0].payment_id, amount: 49999000, at: new Date() } }, $inc: { rev: 1 } });
    const refused = await sg.call('bills.pay', { vendor_id: t.v, amount: 49999000, currency: 'COP', bills: [{ bill_id: t.fe2.id }] }, owner);
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.message).toMatch(new RegExp(`${r2.id}.*approve or cancel`));
    // Approving again finishes it; cancelling releases the bill.
    expect((await sg.call('payment_runs.approve', { id: r2.id, amount: r2.total }, owner)).output.payment_run.status).toBe('approved');
    expect((await sg.call('payment_runs.cancel', { id: r2.id }, owner)).output.bank_may_still_pay).toBeNull();
    expect((await sg.call('bills.pay', { vendor_id: t.v, amount: 49999000, currency: 'COP', bills: [{ bill_id: t.fe2.id }] }, owner)).ok).toBe(true);
  });

  it('a race between the run\'s approval and a payment of its bill: one winner, the bill paid once', async () => {
    const owner = workspace();
    const v = await party(owner, { name: 'Carrera SAS', kind: 'vendor' });
    const payees = [{ vendor_id: v, account_number: '00112233445', account_type: 'savings', bank_code: '5600078' }];
    for (let trial = 0; trial < 8; trial++) {
      const b = await postedBill(sg, owner, v, { supplier_number: `R-${trial}`, lines: [{ description: 'x', account: '5195', quantity: 1, unit_price: 1000000 }] });
      const r = await run(owner, payees, [b.id]);
      const [approve, pay] = await Promise.all([
        sg.call('payment_runs.approve', { id: r.id, amount: r.total }, owner),
        sg.call('bills.pay', { vendor_id: v, amount: 1000000, currency: 'COP', bills: [{ bill_id: b.id }] }, owner),
      ]);
      expect([approve.ok, pay.ok].filter(Boolean)).toHaveLength(1);
      for (const loser of [approve, pay].filter((x) => !x.ok)) expect(loser.code).toBe('conflict');
      const after = await bill(owner, b.id);
      const status = (await sg.call('payment_runs.get', { id: r.id }, owner)).output.payment_run.status;
      if (approve.ok) {
        // The run won: the bill is owed in full and held; the bank file will pay it.
        expect(after).toMatchObject({ status: 'posted', paid: 0, payment_run_id: r.id });
        expect(status).toBe('approved');
        const confirmed = await sg.call('payment_runs.export', { id: r.id, format: 'pain.001.001.03' }, owner);
        expect(confirmed.ok).toBe(true);
        expect((await sg.call('payment_runs.confirm', { id: r.id, paid_on: '2026-11-21' }, owner)).ok).toBe(true);
      } else {
        // The payment won: the run stays a draft and holds nothing.
        expect(after).toMatchObject({ status: 'paid', paid: 1000000, payment_run_id: null });
        expect(status).toBe('draft');
      }
      // Either way: paid exactly once, one payment, one entry.
      expect(await bill(owner, b.id)).toMatchObject({ status: 'paid', paid: 1000000, balance: 0 });
      expect(await settlementsOf(b.id)).toHaveLength(1);
      expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace, 'allocations.bill_id': b.id })).toBe(1);
    }
    expect(await sg.db.collection('bill_payment_markers').countDocuments({ workspace: owner.workspace })).toBe(0);
  });
});
