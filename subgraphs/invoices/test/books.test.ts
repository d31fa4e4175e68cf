import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, draft, startInvoices, unwrap } from './setup.ts';
import { draftBill, postedBill, vendor } from './bills-helpers.ts';
import { ACCOUNTS } from '../src/accounting/accounts.ts';
import { PAYABLE_ACCOUNTS, BILL_LINE_ACCOUNTS, PAYMENT_BANK_ACCOUNTS } from '../src/accounting/payable-accounts.ts';
import { PUC } from '../src/accounting/puc.ts';
import { WITHHOLDING_CONCEPTS } from '../src/accounting/withholdings.ts';
import ExcelJS from 'exceljs';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const metric = async (owner: Principal, query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: query }, owner), 'invoicesMetric');
const records = async (owner: Principal, query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner), 'invoicesRecords');

async function call(owner: Principal, tool: string, input: Record<string, unknown>) {
  const r = await sg.call(tool, input, owner);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

/** Writes and posts a manual entry; its output. */
async function manual(owner: Principal, date: string, memo: string, lines: Record<string, unknown>[]) {
  const d = await call(owner, 'journal.create', { date, memo, lines });
  return (await call(owner, 'journal.post', { id: d.entry.id })).entry;
}

/** A trial balance's rows as {code: [debit, credit, balance]}. */
function tbMap(tb: any): Record<string, [number, number, number]> {
  return Object.fromEntries(tb.rows.map((r: any) => [r.account, [r.debit, r.credit, r.balance]]));
}

describe('the default chart: the PUC holds every code the postings use', () => {
  it('has each automatic posting account, with type and normal balance from its class', async () => {
    const codes = [
      ...Object.values(ACCOUNTS).map((a) => a.code), ...Object.values(PAYABLE_ACCOUNTS).map((a) => a.code), ...Object.keys(BILL_LINE_ACCOUNTS), ...Object.keys(PAYMENT_BANK_ACCOUNTS),
      ...Object.values(WITHHOLDING_CONCEPTS).flatMap((c) => [c.payable.code, c.receivable.code]), '3605', '3610', '3705', '3710',
    ];
    for (const c of codes) expect(PUC[c], c).toBeTypeOf('string');
    // Every code's parent is in the chart too (a tree, no orphans).
    for (const c of Object.keys(PUC)) if (c.length > 1) expect(PUC[c.length === 2 ? c[0] : c.slice(0, -2)], c).toBeTypeOf('string');
    const owner = testPrincipal();
    expect((await call(owner, 'accounts.get', { code: '130505' })).account).toMatchObject({ code: '130505', name: 'Nacionales', class: '1', level: 'subaccount', parent: '1305', type: 'asset', normal_balance: 'debit', default: true, system: true, status: 'active' });
    expect((await call(owner, 'accounts.get', { code: '2408' })).account).toMatchObject({ type: 'liability', normal_balance: 'credit', level: 'account' });
    expect((await call(owner, 'accounts.get', { code: '3605' })).account).toMatchObject({ type: 'equity', normal_balance: 'credit' });
    expect((await call(owner, 'accounts.get', { code: '4135' })).account).toMatchObject({ type: 'income', normal_balance: 'credit' });
    expect((await call(owner, 'accounts.get', { code: '5135' })).account).toMatchObject({ type: 'expense', normal_balance: 'debit' });
    expect((await call(owner, 'accounts.get', { code: '6135' })).account).toMatchObject({ type: 'cost', normal_balance: 'debit' });
    expect((await call(owner, 'accounts.get', { code: '7' })).account).toMatchObject({ type: 'cost', level: 'class', parent: null });
  });

  it('pages the chart in code order by cursor, and the records source `accounts` too', async () => {
    const owner = testPrincipal();
    const first = await call(owner, 'accounts.list', { limit: 10 });
    expect(first.rows.map((r: any) => r.code)).toEqual(['1', '11', '1105', '110505', '110510', '1110', '111005', '111010', '1120', '112005']);
    expect(first.total).toBe(Object.keys(PUC).length);
    const second = await call(owner, 'accounts.list', { limit: 3, cursor: first.next_cursor });
    expect(second.rows.map((r: any) => r.code)).toEqual(['12', '1225', '13']);
    const expenses = await call(owner, 'accounts.list', { class: '5', parent: '53', limit: 100 });
    expect(expenses.rows.map((r: any) => r.code)).toEqual(['5305', '530505', '530520', '5310', '5315']);
    expect(expenses.total).toBeUndefined();
    const bad = await sg.call('accounts.list', { cursor: 'abc.defghijklmnopqrstuvwxyz' }, owner);
    expect(bad).toMatchObject({ ok: false, code: 'invalid_input', field: '/cursor' });
    const src = await records(owner, { source: 'accounts', search: 'retención', limit: 3 });
    expect(src.rows.map((r: any) => r.code)).toEqual(['135515', '2365']);
  });
});

describe('accounts.create, update, archive: sub-accounts and their refusals', () => {
  it('opens a sub-account extending its parent, and refuses what the PUC forbids', async () => {
    const owner = testPrincipal();
    const create = (input: Record<string, unknown>) => sg.call('accounts.create', input, owner);
    const made = await create({ parent: '5135', code: '513501', name: 'Servicios de nube' });
    expect(made.output.account).toMatchObject({ code: '513501', name: 'Servicios de nube', parent: '5135', level: 'subaccount', type: 'expense', normal_balance: 'debit', default: false, system: false, status: 'active' });
    expect((await create({ parent: '513501', code: '51350101', name: 'AWS' })).output.account).toMatchObject({ level: 'auxiliary', parent: '513501' });
    expect(await create({ parent: '5136', code: '513601', name: 'x' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/parent' });
    expect(await create({ parent: '51', code: '5199', name: 'x' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/parent' });
    expect(await create({ parent: '5135', code: '513601', name: 'x' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/code' });
    expect(await create({ parent: '5135', code: '51350101', name: 'x' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/code' });
    expect(await create({ parent: '5135', code: '513501', name: 'again' })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await create({ parent: '1305', code: '130505', name: 'PUC own' })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await create({ parent: '5135', code: '5135a1', name: 'x' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/code' });
    expect(await create({ parent: '5135', code: '513502', name: '' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/name' });

    expect((await call(owner, 'accounts.update', { code: '513501', name: 'Nube y hosting' })).account.name).toBe('Nube y hosting');
    expect(await sg.call('accounts.update', { code: '5135', name: 'Mis servicios' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('accounts.update', { code: '599999', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('accounts.update', { code: '513501' }, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
    const below = await call(owner, 'accounts.list', { parent: '5135' });
    expect(below.rows.map((r: any) => r.code)).toEqual(['513501', '51350101']);

    // Another workspace sees none of it.
    const stranger = testPrincipal();
    expect(await sg.call('accounts.get', { code: '513501' }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect((await call(stranger, 'accounts.list', { parent: '5135' })).rows).toEqual([]);
  });

  it('archives an unused account; refuses one with entries, a system account and a parent of active sub-accounts', async () => {
    const owner = testPrincipal();
    await call(owner, 'accounts.create', { parent: '5140', code: '514001', name: 'Notariales' });
    await call(owner, 'accounts.create', { parent: '5140', code: '514002', name: 'Registro mercantil' });
    await manual(owner, '2026-10-02', 'Gastos notariales', [{ account: '514001', debit: 120000 }, { account: '110505', credit: 120000 }]);
    const refused = await sg.call('accounts.archive', { code: '514001' }, owner);
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.message).toMatch(/1 journal line/);
    expect((await call(owner, 'accounts.get', { code: '514001' })).lines_posted).toBe(1);
    expect(await sg.call('accounts.archive', { code: '130505' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('accounts.archive', { code: '5140' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('accounts.archive', { code: '51' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('accounts.archive', { code: '599999' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect((await call(owner, 'accounts.archive', { code: '514002' })).account.status).toBe('archived');
    // A PUC account nobody posted to can be archived too (and is then archived only in this workspace).
    expect((await call(owner, 'accounts.archive', { code: '1225' })).account).toMatchObject({ status: 'archived', default: true, name: 'Certificados' });
    expect((await call(testPrincipal(), 'accounts.get', { code: '1225' })).account.status).toBe('active');
    // Nothing posts to an archived account; restored, it takes postings again.
    const onArchived = await sg.call('journal.create', { date: '2026-10-03', memo: 'x', lines: [{ account: '514002', debit: 100 }, { account: '110505', credit: 100 }] }, owner);
    expect(onArchived).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
    expect((await call(owner, 'accounts.update', { code: '514002', status: 'active' })).account.status).toBe('active');
    expect((await call(owner, 'journal.create', { date: '2026-10-03', memo: 'x', lines: [{ account: '514002', debit: 100 }, { account: '110505', credit: 100 }] })).entry.status).toBe('draft');
    // A draft whose account is archived before posting is refused at post.
    const d = await call(owner, 'journal.create', { date: '2026-10-03', memo: 'y', lines: [{ account: '1635', debit: 100 }, { account: '110505', credit: 100 }] });
    await call(owner, 'accounts.archive', { code: '1635' });
    const refusedPost = await sg.call('journal.post', { id: d.entry.id }, owner);
    expect(refusedPost).toMatchObject({ ok: false, code: 'conflict' });
    expect(refusedPost.message).toMatch(/1635/);
    expect((await call(owner, 'journal.get', { id: d.entry.id })).entry.status).toBe('draft');
  });
});

describe('journal.create, post, reverse: refusals with code and field', () => {
  it('refuses an unbalanced entry at a line, and every malformed line', async () => {
    const owner = testPrincipal();
    const create = (lines: unknown[], extra: Record<string, unknown> = {}) => sg.call('journal.create', { date: '2026-10-05', memo: 'Prueba', lines, ...extra }, owner);
    const unbalanced = await create([{ account: '5135', debit: 1000 }, { account: '110505', credit: 999 }]);
    expect(unbalanced).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1' });
    expect(unbalanced.message).toMatch(/debits 1000, credits 999/);
    expect(await create([{ account: '5135', debit: 1000, credit: 1000 }, { account: '110505', credit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/credit' });
    expect(await create([{ account: '5135' }, { account: '110505', credit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0' });
    expect(await create([{ account: '5135', debit: 1000 }, { account: '5999', credit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1/account' });
    expect(await create([{ account: '51', debit: 1000 }, { account: '110505', credit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
    expect(await create([{ account: '5135', debit: -5 }, { account: '110505', credit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/debit' });
    expect(await create([{ account: '5135', debit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines' });
    expect(await create([{ account: '5135', debit: 1e15 }, { account: '5120', debit: 1 }, { account: '110505', credit: 1e15 }, { account: '110505', credit: 1 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1' });
    expect(await create([{ account: '5135', debit: 1000, tags: { 'Cost Center': 'x' } }, { account: '110505', credit: 1000 }])).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags' });
    expect(await create([{ account: '5135', debit: 1000 }, { account: '110505', credit: 1000 }], { date: '2031-01-01' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/date' });
    expect(await create([{ account: '5135', debit: 1000 }, { account: '110505', credit: 1000 }], { currency: 'cop' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/currency' });
    expect(await sg.call('journal.post', { id: 'mje_nothing' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('journal.reverse', { id: 'mje_nothing' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('posts once, reverses once with swapped lines, never before the original; sealed to its workspace', async () => {
    const owner = testPrincipal();
    await call(owner, 'dimensions.create_tag', { dimension: 'cost_center', key: 'administracion', name: 'Administración' });
    const d = await call(owner, 'journal.create', {
      date: '2026-10-06', memo: 'Arriendo oficina octubre',
      lines: [{ account: '5120', debit: 2500000, tags: { cost_center: 'administracion' } }, { account: '111005', credit: 2500000 }],
    });
    expect(d.entry).toMatchObject({ status: 'draft', currency: 'COP', total_debit: 2500000, total_credit: 2500000, journal_entry_id: null });
    expect(d.entry.lines[0]).toEqual({ account: '5120', name: 'Arrendamientos', debit: 2500000, credit: 0, party_id: null, tags: { cost_center: 'administracion' } });
    expect(await sg.call('journal.reverse', { id: d.entry.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    const stranger = testPrincipal();
    expect(await sg.call('journal.post', { id: d.entry.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('journal.get', { id: d.entry.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });

    const posted = (await call(owner, 'journal.post', { id: d.entry.id })).entry;
    expect(posted).toMatchObject({ status: 'posted', journal_entry_id: `je_${d.entry.id}` });
    expect(await sg.call('journal.post', { id: d.entry.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('journal.reverse', { id: d.entry.id, date: '2026-10-05' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/date' });

    const reversed = (await call(owner, 'journal.reverse', { id: d.entry.id, date: '2026-10-07' })).entry;
    expect(reversed).toMatchObject({ status: 'reversed', reversal_entry_id: `je_${d.entry.id}_rev`, lines: posted.lines });
    expect(await sg.call('journal.reverse', { id: d.entry.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const journal = await call(owner, 'journal.list', {});
    const rev = journal.rows.find((e: any) => e.id === `je_${d.entry.id}_rev`);
    expect(rev).toMatchObject({ date: '2026-10-07', source: { kind: 'reversal', id: d.entry.id }, total_debit: 2500000, total_credit: 2500000 });
    expect(rev.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['5120', 0, 2500000], ['111005', 2500000, 0]]);
    // By hand: 5120 debited 2,500,000 and credited 2,500,000 → 0; 111005 the mirror → 0.
    const tb = await metric(owner, { metric: 'trial_balance', as_of: '2026-10-31' });
    expect(tbMap(tb)).toEqual({ 111005: [2500000, 2500000, 0], 5120: [2500000, 2500000, 0] });
    // On the 6th, before the reversal: the rent alone.
    expect(tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-10-06' }))).toEqual({ 111005: [0, 2500000, -2500000], 5120: [2500000, 0, 2500000] });
    expect((await metric(stranger, { metric: 'trial_balance', as_of: '2026-10-31' })).rows).toEqual([]);
  });
});

describe('a month of activity: statements against hand figures; closed periods', () => {
  let owner: Principal;
  let invoiceId: string;
  let rentId: string;

  beforeAll(async () => {
    owner = await configuredWorkspace(sg);
    // E0 2026-09-01 capital: Dr 111005 50,000,000 / Cr 3105 50,000,000.
    await manual(owner, '2026-09-01', 'Aporte de capital', [{ account: '111005', debit: 50000000 }, { account: '3105', credit: 50000000 }]);
    // E1 2026-09-15 sundry expense: Dr 5195 500,000 / Cr 111005 500,000.
    await manual(owner, '2026-09-15', 'Gastos diversos', [{ account: '5195', debit: 500000 }, { account: '111005', credit: 500000 }]);
    // E2 2026-10-05 invoice: 2 × 15,000,000 = 30,000,000 + VAT 19 % 5,700,000 = 35,700,000.
    //    Dr 130505 35,700,000 / Cr 413595 30,000,000 / Cr 240805 5,700,000.
    const inv = await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' });
    invoiceId = (await call(owner, 'invoices.post', { id: inv.id })).invoice.id;
    // E3 2026-10-10 bill: 1 × 10,000,000 on 5135 + VAT 19 % 1,900,000 = 11,900,000.
    //    Dr 5135 10,000,000 / Dr 240810 1,900,000 / Cr 220505 11,900,000.
    const v = await vendor(owner);
    await postedBill(sg, owner, v, { issue_date: '2026-10-10', due_date: '2026-11-10', lines: [{ description: 'Soporte', account: '5135', quantity: 1, unit_price: 10000000, tax_rate_ppm: 190000 }] });
    // E4 2026-10-20 payment on the invoice: Dr 111005 20,000,000 / Cr 130505 20,000,000.
    await call(owner, 'payments.register', { customer_id: await andina(owner), amount: 20000000, currency: 'COP', date: '2026-10-20', invoices: [{ invoice_id: invoiceId }] });
    // E5 2026-10-31 rent: Dr 5120 3,000,000 (cost center admin) / Cr 111005 3,000,000.
    await call(owner, 'dimensions.create_tag', { dimension: 'cost_center', key: 'admin', name: 'Administración' });
    rentId = (await manual(owner, '2026-10-31', 'Arriendo octubre', [{ account: '5120', debit: 3000000, tags: { cost_center: 'admin' } }, { account: '111005', credit: 3000000 }])).id;
  });

  it('trial balance at 31 October equals the hand figures, and Σ debits = Σ credits', async () => {
    const tb = await metric(owner, { metric: 'trial_balance', as_of: '2026-10-31' });
    // By hand, [Σ debits, Σ credits, debits − credits]:
    // 111005: 50,000,000 + 20,000,000 = 70,000,000 | 500,000 + 3,000,000 = 3,500,000 | 66,500,000
    // 130505: 35,700,000 | 20,000,000 | 15,700,000
    expect(tbMap(tb)).toEqual({
      111005: [70000000, 3500000, 66500000],
      130505: [35700000, 20000000, 15700000],
      220505: [0, 11900000, -11900000],
      240805: [0, 5700000, -5700000],
      240810: [1900000, 0, 1900000],
      3105: [0, 50000000, -50000000],
      413595: [0, 30000000, -30000000],
      5120: [3000000, 0, 3000000],
      5135: [10000000, 0, 10000000],
      5195: [500000, 0, 500000],
    });
    // Σ debits = 70,000,000 + 35,700,000 + 1,900,000 + 3,000,000 + 10,000,000 + 500,000 = 121,100,000
    // Σ credits = 3,500,000 + 20,000,000 + 11,900,000 + 5,700,000 + 50,000,000 + 30,000,000 = 121,100,000
    const debits = tb.rows.reduce((s: number, r: any) => s + r.debit, 0);
    const credits = tb.rows.reduce((s: number, r: any) => s + r.credit, 0);
    expect(debits).toBe(121100000);
    expect(credits).toBe(121100000);
    expect(tb.rows.reduce((s: number, r: any) => s + r.balance, 0)).toBe(0);
    expect(tb).toMatchObject({ metric: 'trial_balance', unit: 'money', currency: 'COP', summary: { value: 121100000 }, series: [{ period: '2026-10-31', period_end: '2026-10-31', value: 121100000 }] });
    expect(tb.rows.find((r: any) => r.account === '413595')).toMatchObject({ name: 'Venta de otros productos', type: 'income' });
    // At 30 September: only E0 and E1. Σ debits 50,000,000 + 500,000.
    const sep = await metric(owner, { metric: 'trial_balance', as_of: '2026-09-30' });
    expect(tbMap(sep)).toEqual({ 111005: [50000000, 500000, 49500000], 3105: [0, 50000000, -50000000], 5195: [500000, 0, 500000] });
    expect(sep.summary.value).toBe(50500000);
    // Mid-month (day rollups): at 12 October, E0–E3.
    expect(tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-10-12' }))['220505']).toEqual([0, 11900000, -11900000]);
    expect(tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-10-12' }))['111005']).toEqual([50000000, 500000, 49500000]);
  });

  it('balance sheet at 31 October balances: assets = liabilities + equity with the current result', async () => {
    const bs = await metric(owner, { metric: 'balance_sheet', as_of: '2026-10-31' });
    const total = (section: string) => bs.rows.find((r: any) => r.kind === 'total' && r.section === section).balance;
    // Assets: 111005 66,500,000 + 130505 15,700,000 = 82,200,000.
    // Liabilities: 220505 11,900,000 + 240805 5,700,000 − 240810 1,900,000 = 15,700,000.
    // Result: 30,000,000 − 3,000,000 − 10,000,000 − 500,000 = 16,500,000; equity 50,000,000 + 16,500,000 = 66,500,000.
    expect(total('asset')).toBe(82200000);
    expect(total('liability')).toBe(15700000);
    expect(total('equity')).toBe(66500000);
    expect(total('liability_and_equity')).toBe(82200000);
    expect(bs.rows.find((r: any) => r.kind === 'result').balance).toBe(16500000);
    expect(bs.rows.find((r: any) => r.account === '240810')).toMatchObject({ section: 'liability', balance: -1900000 });
    expect(bs.summary.value).toBe(82200000);
  });

  it('exports the trial balance and the income statement to XLSX; read back with exceljs, totals as by hand', async () => {
    const out = await call(owner, 'accounts.export_statement', { metric: 'trial_balance', as_of: '2026-10-31' });
    expect(out).toMatchObject({ filename: 'trial_balance_2026-10-31.xlsx', content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    const buf = Buffer.from(out.base64, 'base64');
    expect(buf.length).toBe(out.size);
    expect(buf.subarray(0, 2).toString()).toBe('PK');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(buf as never);
    const ws = wb.getWorksheet('Balance de prueba')!;
    const values = (n: number) => (ws.getRow(n).values as unknown[]).slice(1);
    expect(values(1)).toEqual(['Balance de prueba']);
    expect(values(4)).toEqual(['Cuenta', 'Nombre', 'Débitos', 'Créditos', 'Saldo']);
    const lines: unknown[][] = [];
    for (let n = 5; n <= ws.rowCount; n++) lines.push(values(n));
    const total = lines.pop()!;
    // The same ten accounts as the hand figures, in pesos (cents / 100).
    expect(lines.map((l) => l[0])).toEqual(['111005', '130505', '220505', '240805', '240810', '3105', '413595', '5120', '5135', '5195']);
    expect(lines[0]).toEqual(['111005', 'Moneda nacional', 700000, 35000, 665000]);
    // By hand: Σ debits 121,100,000 cents = 1,211,000.00; Σ credits the same; the balances sum to 0.
    const sum = (i: number) => Math.round(lines.reduce((s, l) => s + (l[i] as number) * 100, 0));
    expect(sum(2)).toBe(121100000);
    expect(sum(3)).toBe(121100000);
    expect(sum(4)).toBe(0);
    expect(total).toEqual(['', 'Totales', 1211000, 1211000, 0]);
    expect(ws.getCell('C5').numFmt).toBe('#,##0.00;[Red]-#,##0.00');

    const isOut = await call(owner, 'accounts.export_statement', { metric: 'income_statement', from: '2026-10-01', to: '2026-10-31', compare: 'previous_year' });
    const wb2 = new ExcelJS.Workbook();
    await wb2.xlsx.load(Buffer.from(isOut.base64, 'base64') as never);
    const sheet = wb2.getWorksheet('Estado de resultados')!;
    const rows: unknown[][] = [];
    sheet.eachRow((row, n) => { if (n >= 5) rows.push((row.values as unknown[]).slice(1)); });
    // By hand: income 300,000.00; expenses 30,000.00 + 100,000.00 = 130,000.00; result 170,000.00; a year before, nothing.
    expect(rows.find((r) => r[1] === '413595')).toEqual(['income', '413595', 'Venta de otros productos', 300000, 0]);
    expect(rows.find((r) => r[0] === 'result')).toEqual(['result', '', 'Resultado del periodo', 170000, 0]);
    const accountRows = rows.filter((r) => r[1] !== '');
    expect(accountRows.reduce((s, r) => s + (r[0] === 'income' ? 1 : -1) * (r[3] as number), 0)).toBe(170000);
    expect(await sg.call('accounts.export_statement', { metric: 'revenue' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/metric' });
  });

  it('income statement for October by month, compared with the previous period and year', async () => {
    const is = await metric(owner, { metric: 'income_statement', from: '2026-10-01', to: '2026-10-31', interval: 'month', compare: 'previous_period' });
    // October: income 30,000,000; expenses 3,000,000 + 10,000,000 = 13,000,000; result 17,000,000.
    // Previous period (31 days before: 31 Aug – 30 Sep): expenses 500,000; result −500,000.
    expect(is.summary).toMatchObject({ value: 17000000, previous: -500000 });
    // Buckets pair by position (the shared convention of every window metric): the previous
    // window's first month bucket is 31 August alone, which had nothing.
    expect(is.series).toEqual([{ period: '2026-10-01', period_end: '2026-10-31', value: 17000000, previous: 0 }]);
    const row = (code: string) => is.rows.find((r: any) => r.account === code);
    expect(row('413595')).toMatchObject({ section: 'income', value: 30000000, previous: 0 });
    expect(row('5135')).toMatchObject({ section: 'expense', value: 10000000, previous: 0 });
    expect(row('5195')).toMatchObject({ section: 'expense', value: 0, previous: 500000 });
    expect(is.rows.filter((r: any) => r.kind === 'total').map((r: any) => [r.section, r.value, r.previous])).toEqual([
      ['income', 30000000, 0], ['cost', 0, 0], ['expense', 13000000, 500000], ['result', 17000000, -500000],
    ]);
    // The compare figure equals the prior window asked for on its own.
    const prior = await metric(owner, { metric: 'income_statement', from: '2026-08-31', to: '2026-09-30' });
    expect(prior.summary.value).toBe(-500000);
    const py = await metric(owner, { metric: 'income_statement', from: '2026-10-01', to: '2026-10-31', compare: 'previous_year', interval: 'month' });
    expect(py.summary).toMatchObject({ value: 17000000, previous: 0 });
    // Sep + Oct by month: −500,000 then 17,000,000; the window's result is their sum.
    const two = await metric(owner, { metric: 'income_statement', from: '2026-09-01', to: '2026-10-31', interval: 'month' });
    expect(two.series.map((p: any) => p.value)).toEqual([-500000, 17000000]);
    expect(two.summary.value).toBe(16500000);
    await expect(metric(owner, { metric: 'income_statement', from: '2026-10-31', to: '2026-10-01' })).rejects.toMatchObject({ code: 'invalid_input', field: '/from' });
  });


  it('journal.get answers every id journal.list gives, as the list shows it; a manual draft by its own id; nothing of another workspace', async () => {
    const listed = (await call(owner, 'journal.list', { limit: 100 })).rows as any[];
    // E0–E5 of the month above: two manual entries before October, the invoice, the bill, the payment and the rent.
    expect(listed.map((e) => e.source.kind).sort()).toEqual(['bill', 'invoice', 'manual', 'manual', 'manual', 'payment']);
    for (const row of listed) {
      const got = await sg.call('journal.get', { id: row.id }, owner);
      expect(got.ok, `${row.id}: ${got.code} ${got.message}`).toBe(true);
      expect(got.output.entry).toEqual(row);
    }
    // The invoice's entry, by hand: Dr 130505 35,700,000 / Cr 413595 30,000,000 / Cr 240805 5,700,000.
    const invoiceEntry = (await call(owner, 'journal.get', { id: `je_${invoiceId}` })).entry;
    expect(invoiceEntry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['130505', 35700000, 0], ['413595', 0, 30000000], ['240805', 0, 5700000]]);
    // A manual entry is still read by its own id (mje_…), with its status; its journal entry by the id it names.
    const rent = (await call(owner, 'journal.get', { id: rentId })).entry;
    expect(rent).toMatchObject({ id: rentId, status: 'posted', journal_entry_id: `je_${rentId}` });
    expect((await call(owner, 'journal.get', { id: rent.journal_entry_id })).entry).toMatchObject({ id: `je_${rentId}`, source: { kind: 'manual', id: rentId }, total_debit: 3000000 });
    expect(await sg.call('journal.get', { id: 'je_nothing' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('journal.get', { id: `je_${invoiceId}` }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
  });
  it('a closed month refuses a manual entry, an invoice post, a payment and a bill post; reopened, they post', async () => {
    const lateDraft = await call(owner, 'journal.create', { date: '2026-10-25', memo: 'Ajuste', lines: [{ account: '5195', debit: 100000 }, { account: '110505', credit: 100000 }] });
    const inv = await draft(sg, owner, { issue_date: '2026-10-28', due_date: '2026-11-28' });
    const v = await vendor(owner, 'Papelería Central SAS');
    const bill = await draftBill(sg, owner, v, { issue_date: '2026-10-29', due_date: '2026-11-29' });
    const closed = await call(owner, 'periods.close', { month: '2026-10' });
    expect(closed.period).toMatchObject({ month: '2026-10', status: 'closed', closing_entry_id: null });
    expect(await sg.call('periods.close', { month: '2026-10' }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    const refusedCreate = await sg.call('journal.create', { date: '2026-10-15', memo: 'x', lines: [{ account: '5195', debit: 1 }, { account: '110505', credit: 1 }] }, owner);
    expect(refusedCreate).toMatchObject({ ok: false, code: 'conflict' });
    expect(refusedCreate.message).toMatch(/period 2026-10 is closed/);
    expect(await sg.call('journal.post', { id: lateDraft.entry.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const refusedInvoice = await sg.call('invoices.post', { id: inv.id }, owner);
    expect(refusedInvoice).toMatchObject({ ok: false, code: 'conflict' });
    expect(refusedInvoice.message).toMatch(/period 2026-10 is closed/);
    // Nothing was half done: still a draft, no number taken, no entry.
    expect((await call(owner, 'invoices.get', { id: inv.id })).invoice).toMatchObject({ status: 'draft', number: null });
    expect(await sg.call('payments.register', { customer_id: await andina(owner), amount: 1000, currency: 'COP', date: '2026-10-30', invoices: [{ invoice_id: invoiceId }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('bills.post', { id: bill.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('journal.reverse', { id: rentId }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    // The books did not move.
    expect((await metric(owner, { metric: 'trial_balance', as_of: '2026-10-31' })).summary.value).toBe(121100000);
    // November stays open; another workspace's October too.
    expect((await call(owner, 'journal.create', { date: '2026-11-01', memo: 'nov', lines: [{ account: '5195', debit: 1 }, { account: '110505', credit: 1 }] })).entry.status).toBe('draft');
    expect((await call(testPrincipal(), 'journal.create', { date: '2026-10-15', memo: 'other', lines: [{ account: '5195', debit: 1 }, { account: '110505', credit: 1 }] })).entry.status).toBe('draft');
    expect(await sg.call('periods.reopen', { month: '2026-10' }, testPrincipal())).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('periods.close', { month: '2026-13' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/month' });

    expect((await call(owner, 'periods.reopen', { month: '2026-10' })).period).toMatchObject({ status: 'open' });
    expect(await sg.call('periods.reopen', { month: '2026-10' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await call(owner, 'invoices.post', { id: inv.id })).invoice.status).toBe('posted');
    expect((await call(owner, 'journal.post', { id: lateDraft.entry.id })).entry.status).toBe('posted');
    expect((await call(owner, 'bills.post', { id: bill.id })).bill.status).toBe('posted');
    // The reversal of the rent, dated on it: 5120 back to 0.
    expect((await call(owner, 'journal.reverse', { id: rentId })).entry.status).toBe('reversed');
    const tb = tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-10-31' }));
    // 413595: 30,000,000 + the second invoice's 30,000,000; 5120: 3,000,000 both sides; 5195: 500,000 + 100,000.
    expect(tb['413595']).toEqual([0, 60000000, -60000000]);
    expect(tb['5120']).toEqual([3000000, 3000000, 0]);
    expect(tb['5195']).toEqual([600000, 0, 600000]);
    const bs = await metric(owner, { metric: 'balance_sheet', as_of: '2026-10-31' });
    const total = (section: string) => bs.rows.find((r: any) => r.kind === 'total' && r.section === section).balance;
    expect(total('asset')).toBe(total('liability_and_equity'));
  });
});

describe('year-end close: the result moves to equity', () => {
  it('closes December with an entry to 3605, leaves the income statement whole, and reverses it on reopening', async () => {
    const owner = testPrincipal();
    await manual(owner, '2026-06-10', 'Capital', [{ account: '111005', debit: 10000000 }, { account: '3105', credit: 10000000 }]);
    await manual(owner, '2026-07-01', 'Arrendamiento cobrado', [{ account: '111005', debit: 4000000 }, { account: '4155', credit: 4000000 }]);
    await manual(owner, '2026-08-01', 'Servicios', [{ account: '5135', debit: 1500000 }, { account: '111005', credit: 1500000 }]);
    const closed = (await call(owner, 'periods.close', { month: '2026-12' })).period;
    expect(closed.status).toBe('closed');
    expect(closed.closing_entry_id).toMatch(/^je_close_/);
    // By hand: income 4,000,000 − expenses 1,500,000 = 2,500,000 profit.
    // Closing entry: Dr 4155 4,000,000 / Cr 5135 1,500,000 / Cr 3605 2,500,000.
    const journal = await call(owner, 'journal.list', {});
    const closing = journal.rows.find((e: any) => e.id === closed.closing_entry_id);
    expect(closing).toMatchObject({ date: '2026-12-31', source: { kind: 'closing' }, total_debit: 4000000, total_credit: 4000000 });
    expect(closing.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['4155', 4000000, 0], ['5135', 0, 1500000], ['3605', 0, 2500000]]);
    const tb = tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-12-31' }));
    expect(tb['4155']).toEqual([4000000, 4000000, 0]);
    expect(tb['5135']).toEqual([1500000, 1500000, 0]);
    expect(tb['3605']).toEqual([0, 2500000, -2500000]);
    const bs = await metric(owner, { metric: 'balance_sheet', as_of: '2026-12-31' });
    const total = (section: string) => bs.rows.find((r: any) => r.kind === 'total' && r.section === section).balance;
    // Assets 111005: 10,000,000 + 4,000,000 − 1,500,000 = 12,500,000 = equity 3105 10,000,000 + 3605 2,500,000 (result 0 once closed).
    expect(total('asset')).toBe(12500000);
    expect(bs.rows.find((r: any) => r.kind === 'result').balance).toBe(0);
    expect(bs.rows.find((r: any) => r.account === '3605').balance).toBe(2500000);
    expect(total('equity')).toBe(12500000);
    // The year's income statement still shows the year's activity (the closing entry left out).
    const year = await metric(owner, { metric: 'income_statement', from: '2026-01-01', to: '2026-12-31', interval: 'month' });
    expect(year.summary.value).toBe(2500000);
    expect(year.series.map((p: any) => p.value)).toEqual([0, 0, 0, 0, 0, 0, 4000000, -1500000, 0, 0, 0, 0]);
    // The result equals the change in equity over the year: 12,500,000 at year end − 10,000,000 contributed = 2,500,000.
    expect(total('equity') - 10000000).toBe(year.summary.value);
    // Nothing posts into the closed December, not even to equity.
    expect(await sg.call('journal.create', { date: '2026-12-15', memo: 'x', lines: [{ account: '3605', debit: 1 }, { account: '111005', credit: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    const reopened = (await call(owner, 'periods.reopen', { month: '2026-12' })).period;
    expect(reopened).toMatchObject({ status: 'open', closing_entry_id: null });
    const after = tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-12-31' }));
    expect(after['3605']).toEqual([2500000, 2500000, 0]);
    // 4155: credited 4,000,000 (July) and 4,000,000 (the reversal), debited 4,000,000 (the close).
    expect(after['4155']).toEqual([4000000, 8000000, -4000000]);
    expect((await metric(owner, { metric: 'balance_sheet', as_of: '2026-12-31' })).rows.find((r: any) => r.kind === 'result').balance).toBe(2500000);
    expect((await metric(owner, { metric: 'income_statement', from: '2026-01-01', to: '2026-12-31' })).summary.value).toBe(2500000);
    // A December expense after reopening, then closing again: the new result 2,500,000 − 300,000 = 2,200,000.
    await manual(owner, '2026-12-20', 'Mantenimiento', [{ account: '5145', debit: 300000 }, { account: '111005', credit: 300000 }]);
    const again = (await call(owner, 'periods.close', { month: '2026-12' })).period;
    expect(again.closing_entry_id).not.toBe(closed.closing_entry_id);
    const final = tbMap(await metric(owner, { metric: 'trial_balance', as_of: '2026-12-31' }));
    expect(final['3605']).toEqual([2500000, 2500000 + 2200000, -2200000]);
    expect(final['5145']).toEqual([300000, 300000, 0]);
  });
});

describe('a period close or reopen whose process died: finished by the sweep, with no call', () => {
  it('closes December with its closing entry once, and opens a month left half reopened', async () => {
    const owner = testPrincipal();
    await manual(owner, '2026-07-01', 'Arrendamiento cobrado', [{ account: '111005', debit: 4000000 }, { account: '4155', credit: 4000000 }]);
    await manual(owner, '2026-08-01', 'Servicios', [{ account: '5135', debit: 1500000 }, { account: '111005', credit: 1500000 }]);
    await call(owner, 'periods.close', { month: '2026-11' });
    const old = new Date(Date.now() - 5 * 60_000);
    const periodsOf = sg.db.collection('periods');
    const ops = sg.db.collection('operations');
    // December: a close that died right after open → closing (its first turn; its first closing entry).
    const dec = `${owner.workspace}|2026-12`;
    await periodsOf.insertOne({ _id: dec, workspace: owner.workspace, month: '2026-12', status: 'closing', closings: 1, turn: 1, closing_entry_id: null, closed_at: null, closed_by: null, reopened_at: null, updated_at: old } as never);
    await ops.insertOne({ _id: `period_close:${dec}:1`, workspace: owner.workspace, kind: 'period_close', record: `${dec}:1`, run: null, status: 'running', at: old } as never);
    // November: closed by the call above (its first turn), then a reopen that died after closed → closing.
    const nov = `${owner.workspace}|2026-11`;
    await periodsOf.updateOne({ _id: nov } as never, { $set: { status: 'closing', updated_at: old }, $inc: { turn: 1 } });
    await ops.insertOne({ _id: `period_reopen:${nov}:2`, workspace: owner.workspace, kind: 'period_reopen', record: `${nov}:2`, run: null, status: 'running', at: old } as never);

    await sg.sweep();
    const closed = await periodsOf.findOne({ _id: dec } as never);
    expect(closed).toMatchObject({ status: 'closed', closing_entry_id: `je_close_${owner.workspace}_2026_1` });
    // By hand: income 4,000,000 − expenses 1,500,000 = 2,500,000 profit: Dr 4155 4,000,000 / Cr 5135 1,500,000 / Cr 3605 2,500,000, once.
    const closing = await sg.db.collection('journal_entries').find({ workspace: owner.workspace, 'source.kind': 'closing' }).toArray();
    expect(closing.map((e) => e.lines.map((l: any) => [l.account, l.debit, l.credit]))).toEqual([[['4155', 4000000, 0], ['5135', 0, 1500000], ['3605', 0, 2500000]]]);
    expect(await periodsOf.findOne({ _id: nov } as never)).toMatchObject({ status: 'open' });
    // November takes postings again; December none.
    await manual(owner, '2026-11-20', 'Mantenimiento', [{ account: '5145', debit: 300000 }, { account: '111005', credit: 300000 }]);
    expect(await sg.call('journal.create', { date: '2026-12-15', memo: 'x', lines: [{ account: '5145', debit: 1 }, { account: '111005', credit: 1 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await ops.countDocuments({ workspace: owner.workspace, status: 'running' })).toBe(0);
    // A second pass changes nothing.
    await sg.sweep();
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'closing' })).toBe(1);

    // Periods stored by the version before the runner (no turn): October left closing (no marker: the
    // sweep cannot tell a close from a reopen) is resumed by the next close; September open closes and reopens.
    const legacy = (month: string, status: string) => ({ _id: `${owner.workspace}|${month}`, workspace: owner.workspace, month, status, closings: 0, closing_entry_id: null, closed_at: null, closed_by: null, reopened_at: null, updated_at: old });
    await periodsOf.insertMany([legacy('2026-10', 'closing'), legacy('2026-09', 'open')] as never);
    await sg.sweep();
    expect(await periodsOf.findOne({ _id: `${owner.workspace}|2026-10` } as never)).toMatchObject({ status: 'closing' });
    expect((await call(owner, 'periods.close', { month: '2026-10' })).period).toMatchObject({ status: 'closed' });
    expect((await call(owner, 'periods.close', { month: '2026-09' })).period).toMatchObject({ status: 'closed' });
    expect((await call(owner, 'periods.reopen', { month: '2026-09' })).period).toMatchObject({ status: 'open' });
    expect(await periodsOf.findOne({ _id: `${owner.workspace}|2026-09` } as never)).toMatchObject({ status: 'open', turn: 2 });
  });
});

describe('debit notes: late-payment interest is financial income (PUC 4210), not sales (4135)', () => {
  it('books interest to 421005 and keeps it out of revenue; a change of value stays sales; a line may name its income account', async () => {
    const owner = await configuredWorkspace(sg, {
      numbering: { invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 1000 }, debit_note: { prefix: 'ND', from: 1, to: 1000 } },
    });
    const inv = await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' });
    const invoice = (await call(owner, 'invoices.post', { id: inv.id })).invoice;
    // ND1, concept 1 (intereses): 30 days late on 35,700,000 at 2 % a month = 714,000 of interest, no VAT
    // (interest for late payment is not a sale); and 50,000 of collection expenses the line books to 4250 (recuperaciones).
    const interest = (await call(owner, 'invoices.debit_note', {
      invoice_id: invoice.id, concept: 1, reason: 'Pago 30 días tarde', issue_date: '2026-11-20',
      lines: [{ description: 'Intereses de mora, 30 días', quantity: 1, unit_price: 714000 }, { description: 'Gastos de cobranza', quantity: 1, unit_price: 50000, account: '4250' }],
    })).debit_note;
    expect(interest.lines.map((l: any) => [l.description, l.subtotal, l.account])).toEqual([['Intereses de mora, 30 días', 714000, '421005'], ['Gastos de cobranza', 50000, '4250']]);
    // By hand: Dr 130505 764,000 = Cr 421005 714,000 + Cr 4250 50,000.
    const entry = (await call(owner, 'journal.get', { id: interest.journal_entry_id })).entry;
    expect(entry.lines.map((l: any) => [l.account, l.name, l.debit, l.credit])).toEqual([
      ['130505', 'Clientes nacionales', 764000, 0], ['421005', 'Intereses', 0, 714000], ['4250', 'Recuperaciones', 0, 50000],
    ]);
    // ND2, concept 3 (cambio del valor): a price the invoice understated is still a sale: Cr 413595 100,000 + VAT 19,000.
    const change = (await call(owner, 'invoices.debit_note', {
      invoice_id: invoice.id, concept: 3, reason: 'Precio acordado mayor', issue_date: '2026-11-20', lines: [{ description: 'Ajuste de precio', quantity: 1, unit_price: 100000, tax_rate_ppm: 190000 }],
    })).debit_note;
    expect((await call(owner, 'journal.get', { id: change.journal_entry_id })).entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([
      ['130505', 119000, 0], ['413595', 0, 100000], ['240805', 0, 19000],
    ]);
    // The income statement of November: operating income (41) 100,000; non-operating (42) 714,000 + 50,000.
    const is = await metric(owner, { metric: 'income_statement', from: '2026-11-01', to: '2026-11-30' });
    const value = (code: string) => is.rows.find((r: any) => r.account === code)?.value;
    expect([value('413595'), value('421005'), value('4250')]).toEqual([100000, 714000, 50000]);
    // Revenue (sales) counts the invoice and the change of value, never the interest: 30,000,000 in October, 100,000 in November.
    const revenue = await metric(owner, { metric: 'revenue', from: '2026-10-01', to: '2026-11-30', interval: 'month' });
    expect(revenue.series.map((p: any) => p.value)).toEqual([30000000, 100000]);
    // A line's account must be an income account of the chart that takes postings.
    const bad = (account: string) => sg.call('invoices.debit_note', { invoice_id: invoice.id, concept: 1, reason: 'x', issue_date: '2026-11-20', lines: [{ description: 'x', quantity: 1, unit_price: 1, account }] }, owner);
    expect(await bad('5135')).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
    expect(await bad('42')).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
    expect(await bad('429999')).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/account' });
  });
});
