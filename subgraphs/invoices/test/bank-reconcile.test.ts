import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal, ToolContext } from '@cuadra/shared';
import { checkOutput, forgetLegacyAdoption, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, crmPeer, draft, startInvoices, unwrap } from './setup.ts';
import { registerPayments } from '../src/modules/payments/tools/register.ts';
import { bankAccount, camt053 } from './bank-helpers.ts';
import { postedBill, vendor } from './bills-helpers.ts';
import { bankTransactions } from '../src/modules/bank/model.ts';
import { createRule } from '../src/modules/bank/tools/create_rule.ts';
import { listRules } from '../src/modules/bank/tools/list_rules.ts';
import { deleteRule } from '../src/modules/bank/tools/delete_rule.ts';
import { suggest } from '../src/modules/bank/tools/suggest.ts';
import { reconcile } from '../src/modules/bank/tools/reconcile.ts';
import { unreconcile } from '../src/modules/bank/tools/unreconcile.ts';
import { receivablesLane } from '../src/modules/invoices/agenda.ts';
import { get as getInvoice } from '../src/modules/invoices/tools/get.ts';
import { get as getPayment } from '../src/modules/payments/tools/get.ts';
import { get as getBill } from '../src/modules/bills/tools/get.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const IBAN = 'CO12345678901234';

async function call(owner: Principal, tool: string, input: Record<string, unknown>) {
  const r = await sg.call(tool, input, owner);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field ?? ''} ${r.message}`);
  return r.output;
}

/** Σ debits and Σ credits of a workspace's journal entries of one source kind. */
async function entries(owner: Principal, filter: Record<string, unknown> = {}) {
  return sg.db.collection('journal_entries').find({ workspace: owner.workspace, ...filter }).toArray() as Promise<any[]>;
}
const balanced = (e: any) => e.lines.reduce((s: number, l: any) => s + l.debit, 0) === e.lines.reduce((s: number, l: any) => s + l.credit, 0);

/** A posted invoice of 1 line: `price` cents + 19 % VAT. */
async function postedInvoice(owner: Principal, price: number) {
  const inv = await draft(sg, owner, { lines: [{ description: 'Consultoría', quantity: 1, unit_price: price, tax_rate_ppm: 190000 }] });
  return (await call(owner, 'invoices.post', { id: inv.id })).invoice;
}

async function importOne(owner: Principal, bank: string, id: string, entries: Parameters<typeof camt053>[0]['entries']) {
  await call(owner, 'bank.import_statement', { bank_id: bank, format: 'camt053', content: camt053({ id, iban: IBAN, currency: 'COP', entries }) });
  const txs = await bankTransactions(sg.db).find({ workspace: owner.workspace, bank_id: bank }).lean();
  return Object.fromEntries(txs.map((t) => [t.entry_id!, t._id]));
}

describe('bank reconciliation: rules, suggestions, one-to-many against invoices, the metric', () => {
  let owner: Principal;
  let bank: string;
  let invA: any;
  let invB: any;
  let tx: Record<string, string>;
  const metric = async () => unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'bank_reconciliation' } }, owner), 'invoicesMetric');

  beforeAll(async () => {
    owner = await configuredWorkspace(sg);
    bank = await bankAccount(sg, owner);
    // Invoice A: 1,000,000 + VAT 19 % 190,000 = 1,190,000 cents. Invoice B: 2,000,000 + 380,000 = 2,380,000.
    invA = await postedInvoice(owner, 1000000);
    invB = await postedInvoice(owner, 2000000);
    expect([invA.balance, invB.balance]).toEqual([1190000, 2380000]);
    tx = await importOne(owner, bank, 'STMT-R1', [
      // 20,000.00 COP = 2,000,000 cents in, naming invoice A.
      { ref: 'R-1', amount: '20000.00', sign: 'CRDT', date: '2026-11-10', info: `Pago ${invA.number} y abono`, e2e: invA.number },
      // 45,000.50 COP = 4,500,050 cents out: the bank's fee.
      { ref: 'R-2', amount: '45000.50', sign: 'DBIT', date: '2026-11-11', info: 'Comision manejo cuenta' },
      // 23,800.00 COP = 2,380,000 cents in, no reference: invoice B's balance by amount.
      { ref: 'R-3', amount: '23800.00', sign: 'CRDT', date: '2026-11-12', info: 'Transferencia cliente' },
    ]);
  });

  it('metric before: 3 unreconciled, Σ |amount| = 2,000,000 + 4,500,050 + 2,380,000 = 8,880,050; 0 reconciled', async () => {
    const m = await metric();
    expect(m).toMatchObject({ metric: 'bank_reconciliation', unit: 'money', currency: 'COP', summary: { value: 8880050 } });
    expect(m.rows).toEqual([{ bank_id: bank, name: 'Corriente', currency: 'COP', reconciled_count: 0, reconciled_amount: 0, unreconciled_count: 3, unreconciled_amount: 8880050 }]);
  });

  it('rules: created, listed, a source, refused without a test or with a bad account, deleted; sealed', async () => {
    const fee = await sg.call('bank.create_rule', { name: 'Comisiones', description_contains: 'Comision', sign: 'debit', propose: { kind: 'account', account_code: '530505' } }, owner);
    expect(fee.ok).toBe(true);
    checkOutput('bank.create_rule', createRule.output, fee.output);
    expect(fee.output.rule).toMatchObject({ description_contains: 'comision', sign: 'debit', propose: { kind: 'account', account_code: '530505' } });
    const customers = await call(owner, 'bank.create_rule', { name: 'Clientes', sign: 'credit', propose: { kind: 'counterparty' } });
    const list = await sg.call('bank.list_rules', {}, owner);
    checkOutput('bank.list_rules', listRules.output, list.output);
    expect(list.output.rows.map((r: any) => r.name)).toEqual(['Clientes', 'Comisiones']);
    const rows = unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'categorization_rules', kind: 'account' } }, owner), 'invoicesRecords');
    expect(rows.rows.map((r: any) => [r.name, r.account_code])).toEqual([['Comisiones', '530505']]);
    expect(await sg.call('bank.create_rule', { name: 'x', propose: { kind: 'counterparty' } }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/description_contains' });
    expect(await sg.call('bank.create_rule', { name: 'x', sign: 'debit', propose: { kind: 'account', account_code: '999999' } }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/propose/account_code' });
    expect(await sg.call('bank.create_rule', { name: 'x', sign: 'debit', propose: { kind: 'account' } }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/propose/account_code' });
    expect(await sg.call('bank.create_rule', { name: 'x', amount_min: 5, amount_max: 4, propose: { kind: 'counterparty' } }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount_max' });
    expect(await sg.call('bank.create_rule', { name: 'x', bank_id: 'bnk_nope', propose: { kind: 'counterparty' } }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/bank_id' });
    const temp = await call(owner, 'bank.create_rule', { name: 'Temporal', amount_min: 1, propose: { kind: 'counterparty' } });
    // Another workspace sees no rule and cannot delete one.
    const other = testPrincipal();
    expect((await sg.call('bank.list_rules', {}, other)).output.rows).toEqual([]);
    expect(await sg.call('bank.delete_rule', { id: temp.rule.id }, other)).toMatchObject({ ok: false, code: 'not_found' });
    const del = await sg.call('bank.delete_rule', { id: temp.rule.id }, owner);
    checkOutput('bank.delete_rule', deleteRule.output, del.output);
    expect((await sg.call('bank.list_rules', {}, owner)).output.rows).toHaveLength(2);
    expect(customers.rule.propose).toEqual({ kind: 'counterparty' });
  });

  it('suggest: invoice A by reference (its 1,190,000 open, within 2,000,000), 530505 for the fee by rule, invoice B by amount (2,380,000 = its balance)', async () => {
    const r = await sg.call('bank.suggest', { bank_id: bank }, owner);
    expect(r.ok).toBe(true);
    checkOutput('bank.suggest', suggest.output, r.output);
    const by = Object.fromEntries(r.output.suggestions.map((s: any) => [s.transaction_id, s.proposals]));
    expect(by[tx['R-1']]).toEqual([{ kind: 'invoice', id: invA.id, label: invA.number, amount: 1190000, reason: 'reference', rule_id: null }]);
    expect(by[tx['R-2']]).toMatchObject([{ kind: 'account', id: '530505', amount: 4500050, reason: 'rule' }]);
    expect(by[tx['R-3']]).toMatchObject([{ kind: 'invoice', id: invB.id, amount: 2380000, reason: 'rule' }]);
    expect((await sg.call('bank.suggest', { transaction_id: tx['R-1'] }, testPrincipal()))).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('refuses parts that do not add up, two targets, a bill for money in, more than an invoice has open, an unknown invoice; nothing changes', async () => {
    const r = (matches: unknown[]) => sg.call('bank.reconcile', { transaction_id: tx['R-1'], matches }, owner);
    expect(await r([{ invoice_id: invA.id, amount: 1190000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches' });
    expect(await r([{ invoice_id: invA.id, account: '530505', amount: 2000000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches/0' });
    expect(await r([{ bill_id: 'bil_x', amount: 2000000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches/0/bill_id' });
    expect(await r([{ invoice_id: invA.id, amount: 2000000 }])).toMatchObject({ ok: false, code: 'conflict' });
    expect(await r([{ invoice_id: 'inv_nope', amount: 2000000 }])).toMatchObject({ ok: false, code: 'not_found' });
    expect(await r([{ account: '111005', amount: 2000000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches/0/account' });
    expect(await r([{ invoice_id: invA.id, amount: 1000000 }, { invoice_id: invA.id, amount: 1000000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches/1/invoice_id' });
    expect(await r([{ invoice_id: invA.id, amount: 0 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches/0/amount' });
    // Another workspace cannot see the transaction.
    expect(await sg.call('bank.reconcile', { transaction_id: tx['R-1'], matches: [{ account: '4295', amount: 2000000 }] }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    expect((await bankTransactions(sg.db).findById(tx['R-1']).lean())).toMatchObject({ status: 'unreconciled', matches: [] });
  });

  it('one credit of 2,000,000 against A (1,190,000, in full) and B (810,000 of 2,380,000): two payments, balances 0 and 1,570,000, entries Dr 111005 / Cr 130505 balanced', async () => {
    const r = await sg.call('bank.reconcile', { transaction_id: tx['R-1'], matches: [{ invoice_id: invA.id, amount: 1190000 }, { invoice_id: invB.id, amount: 810000 }] }, owner);
    expect(r.ok).toBe(true);
    checkOutput('bank.reconcile', reconcile.output, r.output);
    const t = r.output.transaction;
    expect(t.status).toBe('reconciled');
    expect(t.matches.map((m: any) => [m.type, m.id, m.amount, m.registered])).toEqual([['invoice', invA.id, 1190000, true], ['invoice', invB.id, 810000, true]]);
    const a = (await call(owner, 'invoices.get', { id: invA.id })).invoice;
    const b = (await call(owner, 'invoices.get', { id: invB.id })).invoice;
    // By hand: A 1,190,000 − 1,190,000 = 0 (paid); B 2,380,000 − 810,000 = 1,570,000 (partially_paid).
    expect([a.status, a.balance, b.status, b.balance]).toEqual(['paid', 0, 'partially_paid', 1570000]);
    const pays = await Promise.all(t.matches.map((m: any) => call(owner, 'payments.get', { id: m.payment_id })));
    expect(pays.map((p: any) => [p.payment.amount, p.payment.date, p.payment.customer_id])).toEqual([[1190000, '2026-11-10', await andina(owner)], [810000, '2026-11-10', await andina(owner)]]);
    for (const m of t.matches) {
      const [e] = await entries(owner, { _id: `je_${m.payment_id}` });
      expect(balanced(e)).toBe(true);
      expect(e.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['111005', m.amount, 0], ['130505', 0, m.amount]]);
    }
    // Reconciled once: a second call is refused and books nothing.
    expect(await sg.call('bank.reconcile', { transaction_id: tx['R-1'], matches: [{ account: '4295', amount: 2000000 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await entries(owner, { 'source.kind': 'payment' })).toHaveLength(2);
  });

  it('the fee against 530505 by the rule: Dr 530505 / Cr 111005 4,500,050; undo writes the reversing entry and restores the counters', async () => {
    const r = await call(owner, 'bank.reconcile', { transaction_id: tx['R-2'], matches: [{ account: '530505', amount: 4500050 }] });
    const jeId = r.transaction.matches[0].journal_entry_id;
    const [e] = await entries(owner, { _id: jeId });
    expect(e.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['530505', 4500050, 0], ['111005', 0, 4500050]]);
    // Metric after: reconciled 2 for 2,000,000 + 4,500,050 = 6,500,050; unreconciled R-3 only, 2,380,000.
    expect((await metric()).rows[0]).toMatchObject({ reconciled_count: 2, reconciled_amount: 6500050, unreconciled_count: 1, unreconciled_amount: 2380000 });
    const u = await sg.call('bank.unreconcile', { transaction_id: tx['R-2'] }, owner);
    expect(u.ok).toBe(true);
    checkOutput('bank.unreconcile', unreconcile.output, u.output);
    expect(u.output.transaction).toMatchObject({ status: 'unreconciled', matches: [], reconciled_at: null });
    const reversal = (await entries(owner, { 'source.kind': 'reversal', 'source.id': jeId }))[0];
    expect(reversal.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['530505', 0, 4500050], ['111005', 4500050, 0]]);
    // The original stays: both entries, each balanced, net zero on 530505.
    expect(await entries(owner, { _id: jeId })).toHaveLength(1);
    expect([e, reversal].every(balanced)).toBe(true);
    // By hand: reconciled 1 (R-1, 2,000,000); unreconciled R-2 + R-3 = 4,500,050 + 2,380,000 = 6,880,050.
    const m = await metric();
    expect(m.rows[0]).toMatchObject({ reconciled_count: 1, reconciled_amount: 2000000, unreconciled_count: 2, unreconciled_amount: 6880050 });
    expect(m.summary.value).toBe(6880050);
    // Undo again: it is no longer reconciled.
    expect(await sg.call('bank.unreconcile', { transaction_id: tx['R-2'] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('bank.unreconcile', { transaction_id: tx['R-1'] }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('two reconciliations of one transaction at once: one applies, the other is refused; one payment booked', async () => {
    const input = { transaction_id: tx['R-3'], matches: [{ invoice_id: invB.id, amount: 1570000 }, { account: '4295', amount: 810000 }] };
    const [x, y] = await Promise.all([sg.call('bank.reconcile', input, owner), sg.call('bank.reconcile', input, owner)]);
    expect([x.ok, y.ok].sort()).toEqual([false, true]);
    expect([x, y].find((r) => !r.ok)).toMatchObject({ code: 'conflict' });
    // By hand: B had 1,570,000 open; paid now. Three customer payments in all (2 from R-1, 1 here).
    expect((await call(owner, 'invoices.get', { id: invB.id })).invoice).toMatchObject({ status: 'paid', balance: 0 });
    expect(await entries(owner, { 'source.kind': 'payment' })).toHaveLength(3);
    expect(await entries(owner, { 'source.kind': 'bank_transaction' })).toHaveLength(2);
    expect((await metric()).rows[0]).toMatchObject({ reconciled_count: 2, reconciled_amount: 4380000, unreconciled_count: 1, unreconciled_amount: 4500050 });
  });

  it('undo of the two-invoice reconciliation: both payments reversed (entries Dr 130505 / Cr 111005), A owes 1,190,000 again, B 810,000; counters back', async () => {
    const before = (await bankTransactions(sg.db).findById(tx['R-1']).lean())!;
    // The receivables lane reads the due-date index: a paid invoice is not in it; reopened, it is again, owing its balance.
    const lane = async () => (await receivablesLane({ from: '2026-01-01', to: '2027-12-31', limit: 100, overdue: true } as never, { db: sg.db, workspace: owner.workspace, now: new Date() } as never))
      .map((e) => [(e.ref as { invoice_id?: string } | undefined)?.invoice_id, e.amount]);
    expect((await lane()).filter(([id]) => id === invA.id || id === invB.id)).toEqual([]);
    const u = await call(owner, 'bank.unreconcile', { transaction_id: tx['R-1'] });
    expect(u.transaction).toMatchObject({ status: 'unreconciled', matches: [] });
    const aOut = await call(owner, 'invoices.get', { id: invA.id });
    const bOut = await call(owner, 'invoices.get', { id: invB.id });
    const [a, b] = [aOut.invoice, bOut.invoice];
    // By hand: A 0 + 1,190,000 = 1,190,000, nothing paid → posted. B was paid (0) by 810,000 (R-1) + 1,570,000:
    // 0 + 810,000 = 810,000 open, 1,570,000 paid → partially_paid.
    expect([a.status, a.balance, a.paid, b.status, b.balance, b.paid]).toEqual(['posted', 1190000, 0, 'partially_paid', 810000, 1570000]);
    expect((await lane()).filter(([id]) => id === invA.id || id === invB.id).sort()).toEqual([[invA.id, 1190000], [invB.id, 810000]].sort());
    checkOutput('invoices.get', getInvoice.output, aOut);
    checkOutput('invoices.get', getInvoice.output, bOut);
    // A's settlements: the payment +1,190,000 and its reversal −1,190,000, both dated 2026-11-10 (Σ 0: owes all again).
    expect(a.settlements.map((x: any) => [x.date, x.amount])).toEqual([['2026-11-10', 1190000], ['2026-11-10', -1190000]]);
    for (const m of before.matches) {
      const p = await call(owner, 'payments.get', { id: m.payment_id });
      checkOutput('payments.get', getPayment.output, p);
      expect(p.payment.status).toBe('reversed');
      const [rev] = await entries(owner, { _id: `je_rev_${m.payment_id}` });
      expect(rev.source).toEqual({ kind: 'reversal', id: `je_${m.payment_id}` });
      expect(rev.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['111005', 0, m.amount], ['130505', m.amount, 0]]);
      // The original entry stays.
      expect(await entries(owner, { _id: `je_${m.payment_id}` })).toHaveLength(1);
    }
    expect((await entries(owner)).every(balanced)).toBe(true);
    // By hand: reconciled R-3 only (2,380,000); unreconciled R-1 + R-2 = 2,000,000 + 4,500,050 = 6,500,050.
    expect((await metric()).rows[0]).toMatchObject({ reconciled_count: 1, reconciled_amount: 2380000, unreconciled_count: 2, unreconciled_amount: 6500050 });
    // The invoice can be reconciled again (A now fully, and 810,000 to B).
    const again = await call(owner, 'bank.reconcile', { transaction_id: tx['R-1'], matches: [{ invoice_id: invA.id, amount: 1190000 }, { invoice_id: invB.id, amount: 810000 }] });
    expect(again.transaction.status).toBe('reconciled');
    expect((await call(owner, 'invoices.get', { id: invB.id })).invoice).toMatchObject({ status: 'paid', balance: 0 });
  });
});

describe('bank reconciliation: bills, and undo in a closed period', () => {
  it('a debit against a posted bill records the vendor payment through bills.pay\'s path; undo refused once October is closed', async () => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner);
    const v = await vendor(owner);
    // Bill: 100,000 + VAT 19 % 19,000 = 119,000 cents.
    const bill = await postedBill(sg, owner, v, { issue_date: '2026-10-02', due_date: '2026-10-30' });
    expect(bill.balance).toBe(119000);
    const tx = await importOne(owner, bank, 'STMT-OCT', [
      { ref: 'O-1', amount: '1190.00', sign: 'DBIT', date: '2026-10-20', info: `Pago ${bill.supplier_number}` },
      { ref: 'O-2', amount: '12.50', sign: 'DBIT', date: '2026-10-21', info: 'GMF' },
    ]);
    const r = await call(owner, 'bank.reconcile', { transaction_id: tx['O-1'], matches: [{ bill_id: bill.id, amount: 119000 }] });
    expect(r.transaction.matches[0]).toMatchObject({ type: 'bill', registered: true });
    expect((await call(owner, 'bills.get', { id: bill.id })).bill).toMatchObject({ status: 'paid', balance: 0 });
    const [e] = await entries(owner, { _id: `je_${r.transaction.matches[0].payment_id}` });
    expect(e.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['220505', 119000, 0], ['111005', 0, 119000]]);
    // Undo: the bill owes 119,000 again (posted), reversing entry Dr 111005 / Cr 220505; then reconciled again.
    await call(owner, 'bank.unreconcile', { transaction_id: tx['O-1'] });
    const undone = await call(owner, 'bills.get', { id: bill.id });
    checkOutput('bills.get', getBill.output, undone);
    expect(undone.bill).toMatchObject({ status: 'posted', balance: 119000, paid: 0 });
    const [rev] = await entries(owner, { _id: `je_rev_${r.transaction.matches[0].payment_id}` });
    expect(rev.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['220505', 0, 119000], ['111005', 119000, 0]]);
    const r2 = await call(owner, 'bank.reconcile', { transaction_id: tx['O-1'], matches: [{ bill_id: bill.id, amount: 119000 }] });
    expect(r2.transaction.matches[0].payment_id).not.toBe(r.transaction.matches[0].payment_id);
    expect((await call(owner, 'bills.get', { id: bill.id })).bill).toMatchObject({ status: 'paid', balance: 0 });
    // 12.50 COP = 1,250 cents of bank charges against 530505 (Gastos bancarios).
    const gmf = await call(owner, 'bank.reconcile', { transaction_id: tx['O-2'], matches: [{ account: '530505', amount: 1250 }] });
    await call(owner, 'periods.close', { month: '2026-10' });
    const refused = await sg.call('bank.unreconcile', { transaction_id: tx['O-2'] }, owner);
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.message).toContain('closed');
    expect((await bankTransactions(sg.db).findById(tx['O-2']).lean())).toMatchObject({ status: 'reconciled' });
    expect(await entries(owner, { 'source.kind': 'reversal', 'source.id': gmf.transaction.matches[0].journal_entry_id })).toHaveLength(0);
    // Undoing the bill's reconciliation is refused the same way (the period is checked first).
    expect(await sg.call('bank.unreconcile', { transaction_id: tx['O-1'] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('bank reconciliation: a payment already recorded', () => {
  it('links a credit to a payment registered before (nothing new booked); undo drops the link and leaves the payment', async () => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner);
    const customer = await andina(owner);
    // A payment of 500.00 COP = 50,000 cents registered by hand, naming no invoice (kept as customer credit).
    const pay = (await call(owner, 'payments.register', { customer_id: customer, amount: 50000, currency: 'COP', date: '2026-11-03' })).payment;
    const tx = await importOne(owner, bank, 'STMT-P', [{ ref: 'P-1', amount: '500.00', sign: 'CRDT', date: '2026-11-03', info: 'Consignacion' }]);
    const journalBefore = (await entries(owner)).length;
    // Parts adding up to 50,001 for a transaction of 50,000 are refused.
    expect(await sg.call('bank.reconcile', { transaction_id: tx['P-1'], matches: [{ payment_id: pay.id, amount: 50000 }, { account: '4295', amount: 1 }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/matches' });
    const r = await call(owner, 'bank.reconcile', { transaction_id: tx['P-1'], matches: [{ payment_id: pay.id, amount: 50000 }] });
    expect(r.transaction.matches).toEqual([{ type: 'payment', id: pay.id, amount: 50000, payment_id: pay.id, registered: false, journal_entry_id: null }]);
    expect((await entries(owner)).length).toBe(journalBefore);
    await call(owner, 'bank.unreconcile', { transaction_id: tx['P-1'] });
    expect((await call(owner, 'payments.get', { id: pay.id })).payment.status).toBe('completed');
    expect((await entries(owner)).length).toBe(journalBefore);
    // Another workspace's payment is not found.
    const other = testPrincipal();
    const otherBank = await bankAccount(sg, other);
    const otherTx = await importOne(other, otherBank, 'STMT-P', [{ ref: 'P-1', amount: '500.00', sign: 'CRDT', date: '2026-11-03', info: 'Consignacion' }]);
    expect(await sg.call('bank.reconcile', { transaction_id: otherTx['P-1'], matches: [{ payment_id: pay.id, amount: 50000 }] }, other)).toMatchObject({ ok: false, code: 'not_found' });
  });
});

describe('bank_reconciliation over a window, by interval, compared', () => {
  it('counts the transactions the bank booked in the window as they stand now; undo moves them back on their own date', async () => {
    const owner = testPrincipal();
    const corriente = await bankAccount(sg, owner);
    const ahorros = await bankAccount(sg, owner, { name: 'Ahorros', account_number: 'CO55 0000 1111 2222' });
    // Corriente: A-1 +10,000 (20 Oct), A-2 −25,050 (3 Nov), A-3 +100,000 (10 Nov).
    const a = await importOne(owner, corriente, 'STMT-W1', [
      { ref: 'A-1', amount: '100.00', sign: 'CRDT', date: '2026-10-20', info: 'Intereses octubre' },
      { ref: 'A-2', amount: '250.50', sign: 'DBIT', date: '2026-11-03', info: 'Comision' },
      { ref: 'A-3', amount: '1000.00', sign: 'CRDT', date: '2026-11-10', info: 'Consignacion' },
    ]);
    // Ahorros: B-1 −4,000 (4 Nov), B-2 +725 (24 Nov).
    await call(owner, 'bank.import_statement', {
      bank_id: ahorros, format: 'camt053', content: camt053({
        id: 'STMT-W2', iban: 'CO55000011112222', currency: 'COP', entries: [
          { ref: 'B-1', amount: '40.00', sign: 'DBIT', date: '2026-11-04', info: 'Retiro' },
          { ref: 'B-2', amount: '7.25', sign: 'CRDT', date: '2026-11-24', info: 'Intereses noviembre' },
        ],
      }),
    });
    const b = Object.fromEntries((await bankTransactions(sg.db).find({ workspace: owner.workspace, bank_id: ahorros }).lean()).map((t) => [t.entry_id!, t._id]));
    await call(owner, 'bank.reconcile', { transaction_id: a['A-2'], matches: [{ account: '530505', amount: 25050 }] });
    await call(owner, 'bank.reconcile', { transaction_id: a['A-1'], matches: [{ account: '421005', amount: 10000 }] });
    await call(owner, 'bank.reconcile', { transaction_id: b['B-2'], matches: [{ account: '421005', amount: 725 }] });
    const q = async (query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'bank_reconciliation', ...query } }, owner), 'invoicesMetric');

    // November by ISO week, unreconciled amount booked in each: 1 Nov 0; 2–8 Nov B-1 4,000 (A-2
    // reconciled); 9–15 Nov A-3 100,000; 16–22 Nov 0; 23–29 Nov 0 (B-2 reconciled); 30 Nov 0.
    const weeks = await q({ from: '2026-11-01', to: '2026-11-30', interval: 'week' });
    expect(weeks.series).toEqual([
      { period: '2026-11-01', period_end: '2026-11-01', value: 0 }, { period: '2026-11-02', period_end: '2026-11-08', value: 4000 },
      { period: '2026-11-09', period_end: '2026-11-15', value: 100000 }, { period: '2026-11-16', period_end: '2026-11-22', value: 0 },
      { period: '2026-11-23', period_end: '2026-11-29', value: 0 }, { period: '2026-11-30', period_end: '2026-11-30', value: 0 },
    ]);
    expect(weeks.summary).toEqual({ value: 104000 });
    // Rows over November (by name): Ahorros rec B-2 725, open B-1 4,000; Corriente rec A-2 25,050, open A-3 100,000.
    expect(weeks.rows).toEqual([
      { bank_id: ahorros, name: 'Ahorros', currency: 'COP', reconciled_count: 1, reconciled_amount: 725, unreconciled_count: 1, unreconciled_amount: 4000 },
      { bank_id: corriente, name: 'Corriente', currency: 'COP', reconciled_count: 1, reconciled_amount: 25050, unreconciled_count: 1, unreconciled_amount: 100000 },
    ]);

    // Compared with the 30 days before (2–31 Oct): A-1 is reconciled, so nothing was open there.
    const month = await q({ from: '2026-11-01', to: '2026-11-30', interval: 'month', compare: 'previous_period' });
    expect(month.series).toEqual([{ period: '2026-11-01', period_end: '2026-11-30', value: 104000, previous: 0 }]);
    expect(month.summary).toEqual({ value: 104000, previous: 0 });
    expect(month.rows.map((r: any) => [r.name, r.previous])).toEqual([['Ahorros', 0], ['Corriente', 0]]);

    // Undo A-1: it is open again on 20 Oct, its own date (not the day of the undo).
    await call(owner, 'bank.unreconcile', { transaction_id: a['A-1'] });
    const after = await q({ from: '2026-11-01', to: '2026-11-30', interval: 'month', compare: 'previous_period' });
    // 104,000 against 10,000: change (104,000 − 10,000) × 10,000 / 10,000 = 94,000 bps.
    expect(after.summary).toEqual({ value: 104000, previous: 10000, change_bps: 94000 });
    expect(after.series).toEqual([{ period: '2026-11-01', period_end: '2026-11-30', value: 104000, previous: 10000 }]);
    expect(after.rows.map((r: any) => [r.name, r.unreconciled_amount, r.previous])).toEqual([['Ahorros', 4000, 0], ['Corriente', 100000, 10000]]);
    const october = await q({ from: '2026-10-01', to: '2026-10-31' });
    expect(october.rows.map((r: any) => [r.name, r.reconciled_count, r.unreconciled_count, r.unreconciled_amount])).toEqual([['Ahorros', 0, 0, 0], ['Corriente', 0, 1, 10000]]);

    // Without a window: every transaction of each account (open: 4,000 + 10,000 + 100,000 = 114,000).
    const all = await q({});
    expect(all.summary).toEqual({ value: 114000 });
    expect(all.rows.map((r: any) => [r.name, r.reconciled_amount, r.unreconciled_count, r.unreconciled_amount])).toEqual([['Ahorros', 725, 1, 4000], ['Corriente', 25050, 2, 110000]]);

    // Refusals: a window backwards, or longer than 366 days.
    await expect(q({ from: '2026-11-30', to: '2026-11-01' })).rejects.toMatchObject({ code: 'invalid_input', field: '/from' });
    await expect(q({ from: '2025-01-01', to: '2026-11-01' })).rejects.toMatchObject({ code: 'invalid_input', field: '/to' });
    // Another workspace sees none of it.
    expect((await unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'bank_reconciliation', from: '2026-11-01', to: '2026-11-30' } }, testPrincipal()), 'invoicesMetric')).rows).toEqual([]);
  });
});

/** The context a tool call of `owner` runs with (crm answering through its test peer): what a dead call had booked with. */
function toolContext(owner: Principal): ToolContext {
  return {
    db: sg.db, workspace: owner.workspace, now: new Date(), principal: owner,
    graph: async (_sg: string, query: string, variables: Record<string, unknown>) => {
      const r = await crmPeer().graphql(query, variables, owner);
      if (r.body.errors?.length) throw new Error(r.body.errors[0].message);
      return r.body.data;
    },
  } as unknown as ToolContext;
}

describe('bank reconciliations and undos whose process died: finished by the sweep, with no call', () => {
  it('books what is missing once, records every part, moves the counters once, under an old lease and under the runner', async () => {
    const owner = await configuredWorkspace(sg);
    const bank = await bankAccount(sg, owner);
    // Invoice: 1,000,000 + 19 % = 1,190,000 cents.
    const inv = await postedInvoice(owner, 1000000);
    const tx = await importOne(owner, bank, 'STMT-D', [
      { ref: 'L-1', amount: '6000.00', sign: 'CRDT', date: '2026-11-10', info: 'Abono y rendimientos' },
      { ref: 'N-1', amount: '3000.00', sign: 'CRDT', date: '2026-11-11', info: 'Abono' },
      { ref: 'U-1', amount: '2000.00', sign: 'CRDT', date: '2026-11-12', info: 'Reintegro' },
    ]);
    const old = new Date(Date.now() - 5 * 60_000);
    // L-1, under the lease kept on the transaction before the runner (a stored database after the
    // upgrade): 500,000 to the invoice and 100,000 to 4295; the payment of part 0 booked under its
    // derived id, nothing recorded.
    await registerPayments(toolContext(owner), { customer_id: inv.customer_id, amount: 500000, currency: 'COP', date: '2026-11-10', method: 'bank_transfer', reference: 'L-1', invoices: [{ invoice_id: inv.id, amount: 500000 }] }, { id: `pay_${tx['L-1'].slice(4)}_1_0` });
    const planned = (m: Record<string, unknown>) => ({ payment_id: null, registered: false, journal_entry_id: null, ...m });
    await bankTransactions(sg.db).updateOne({ _id: tx['L-1'] }, {
      $set: { status: 'reconciling', attempt: 1, lock_at: old, matches: [planned({ type: 'invoice', id: inv.id, amount: 500000 }), planned({ type: 'account', id: '4295', amount: 100000 })] },
      $inc: { rev: 1 },
    });
    // N-1, under the runner: its marker (a minute and more old) and the transaction leased, nothing booked.
    await bankTransactions(sg.db).updateOne({ _id: tx['N-1'] }, { $set: { status: 'reconciling', attempt: 1, lock_at: null, matches: [planned({ type: 'invoice', id: inv.id, amount: 300000 })] }, $inc: { rev: 1 } });
    await sg.db.collection('operations').insertOne({ _id: `bank_reconcile:${tx['N-1']}:1`, workspace: owner.workspace, kind: 'bank_reconcile', record: `${tx['N-1']}:1`, run: null, status: 'running', at: old } as never);
    // U-1, reconciled against 4295 by a call, then an undo under the old lease that died before reversing anything.
    const u = await call(owner, 'bank.reconcile', { transaction_id: tx['U-1'], matches: [{ account: '4295', amount: 200000 }] });
    await bankTransactions(sg.db).updateOne({ _id: tx['U-1'] }, { $set: { status: 'reconciling', undoing: 'reconciled', lock_at: old }, $inc: { rev: 1 } });
    // Data an older version left is adopted at the upgrade, once (operations.ts adoptLegacyStore): this is that upgrade.
    await forgetLegacyAdoption(sg.db);

    await sg.sweep();
    const [l, n, un] = await Promise.all(['L-1', 'N-1', 'U-1'].map((r) => bankTransactions(sg.db).findById(tx[r]).lean()));
    expect(l).toMatchObject({ status: 'reconciled', lock_at: null, matches: [
      { type: 'invoice', payment_id: `pay_${tx['L-1'].slice(4)}_1_0`, registered: true }, { type: 'account', id: '4295', journal_entry_id: `je_${tx['L-1']}_1_1` },
    ] });
    expect(n).toMatchObject({ status: 'reconciled', matches: [{ type: 'invoice', payment_id: `pay_${tx['N-1'].slice(4)}_1_0`, registered: true }] });
    expect(un).toMatchObject({ status: 'unreconciled', matches: [], undoing: null, lock_at: null });
    // Each payment once: 1,190,000 − 500,000 − 300,000 = 390,000 open.
    expect(await sg.db.collection('payments').countDocuments({ workspace: owner.workspace })).toBe(2);
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice.balance).toBe(390000);
    // L-1's 100,000 to 4295: Dr 111005 / Cr 4295, once; U-1's entry reversed once (Dr 4295 / Cr 111005).
    expect((await entries(owner, { _id: `je_${tx['L-1']}_1_1` })).map((e) => e.lines.map((x: any) => [x.account, x.debit, x.credit]))).toEqual([[['111005', 100000, 0], ['4295', 0, 100000]]]);
    const reversal = await entries(owner, { 'source.id': u.transaction.matches[0].journal_entry_id, 'source.kind': 'reversal' });
    expect(reversal.map((e) => e.lines.map((x: any) => [x.account, x.debit, x.credit]))).toEqual([[['111005', 0, 200000], ['4295', 200000, 0]]]);
    expect((await entries(owner)).every(balanced)).toBe(true);
    // Counters by hand: reconciled L-1 + N-1 = 600,000 + 300,000 = 900,000; unreconciled U-1 = 200,000.
    const m = unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'bank_reconciliation' } }, owner), 'invoicesMetric');
    expect(m.rows.map((r: any) => [r.reconciled_count, r.reconciled_amount, r.unreconciled_count, r.unreconciled_amount])).toEqual([[2, 900000, 1, 200000]]);
    expect(await sg.db.collection('operations').countDocuments({ workspace: owner.workspace, status: 'running' })).toBe(0);
    // A second pass changes nothing.
    const journal = (await entries(owner)).length;
    await sg.sweep();
    expect(await sg.db.collection('payments').countDocuments({ workspace: owner.workspace })).toBe(2);
    expect((await entries(owner)).length).toBe(journal);
  });
});

describe('bank reconciliation: a process that died after registering a customer payment', () => {
  it('is taken over after the lease by a call with the same parts: the payment it booked is found by its id, nothing is booked twice', async () => {
    const owner = await configuredWorkspace(sg);
    const bank = await bankAccount(sg, owner);
    // Invoice: 1,000,000 + 19 % = 1,190,000 cents; the customer pays 500,000 of it.
    const inv = await postedInvoice(owner, 1000000);
    const tx = (await importOne(owner, bank, 'STMT-C', [{ ref: 'C-1', amount: '5000.00', sign: 'CRDT', date: '2026-11-10', info: 'Abono' }]))['C-1'];
    // What the dead process left: the lease (attempt 1, a minute and more ago), the payment booked
    // under the id attempt 1 derives for part 0, and not yet recorded on the transaction.
    const ctx = toolContext(owner);
    const derived = `pay_${tx.slice(4)}_1_0`;
    await registerPayments(ctx, { customer_id: inv.customer_id, amount: 500000, currency: 'COP', date: '2026-11-10', method: 'bank_transfer', reference: 'C-1', invoices: [{ invoice_id: inv.id, amount: 500000 }] }, { id: derived });
    await bankTransactions(sg.db).updateOne({ _id: tx }, {
      $set: { status: 'reconciling', attempt: 1, lock_at: new Date(Date.now() - 5 * 60_000), matches: [{ type: 'invoice', id: inv.id, amount: 500000, payment_id: null, registered: false, journal_entry_id: null }] },
      $inc: { rev: 1 },
    });
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice.balance).toBe(1190000 - 500000);

    // Other parts than the interrupted call's are refused; the same parts finish it.
    expect(await sg.call('bank.reconcile', { transaction_id: tx, matches: [{ account: '4295', amount: 500000 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const done = await call(owner, 'bank.reconcile', { transaction_id: tx, matches: [{ invoice_id: inv.id, amount: 500000 }] });
    expect(done.transaction).toMatchObject({ status: 'reconciled', matches: [{ type: 'invoice', id: inv.id, amount: 500000, payment_id: derived, registered: true }] });
    // One payment, applied once: 1,190,000 − 500,000 = 690,000 open.
    expect(await sg.db.collection('payments').countDocuments({ workspace: owner.workspace })).toBe(1);
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice.balance).toBe(690000);
    const all = (await entries(owner)).filter((e) => e.source.kind === 'payment');
    expect(all).toHaveLength(1);
    expect(all.every(balanced)).toBe(true);
    // Undo reverses that one payment; a new reconciliation is attempt 2, with ids of its own.
    await call(owner, 'bank.unreconcile', { transaction_id: tx });
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice.balance).toBe(1190000);
    const again = await call(owner, 'bank.reconcile', { transaction_id: tx, matches: [{ invoice_id: inv.id, amount: 500000 }] });
    expect(again.transaction.matches[0].payment_id).toBe(`pay_${tx.slice(4)}_2_0`);
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice.balance).toBe(690000);

    // An undo that died right after taking the lease: a reconcile cannot take it over; another undo
    // finishes it, and the counters move back once (it started from reconciled).
    await bankTransactions(sg.db).updateOne({ _id: tx }, { $set: { status: 'reconciling', undoing: 'reconciled', lock_at: new Date(Date.now() - 5 * 60_000) }, $inc: { rev: 1 } });
    expect(await sg.call('bank.reconcile', { transaction_id: tx, matches: [{ invoice_id: inv.id, amount: 500000 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    await call(owner, 'bank.unreconcile', { transaction_id: tx });
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice.balance).toBe(1190000);
    const m = unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'bank_reconciliation' } }, owner), 'invoicesMetric');
    expect(m.rows.map((r: any) => [r.reconciled_count, r.unreconciled_count, r.unreconciled_amount])).toEqual([[0, 1, 500000]]);
  });
});
