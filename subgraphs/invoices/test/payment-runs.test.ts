import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { postedBill, workspace } from './bills-helpers.ts';
import { pain001Xsd, xmllintValidate } from './iso20022-schemas.ts';
import { party, startInvoices, unwrap } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});


const DEBTOR = { name: 'Cuadra Demo SAS', tax_id: '900373115', account_number: '12345678901', account_type: 'checking', bic: 'COLOCOBM' };
const line = (unit_price: number, quantity = 1, tax_rate_ppm = 0) => [{ description: 'Compra', account: '5195', quantity, unit_price, tax_rate_ppm }];

/** Two vendors with NITs, and the bank accounts the run pays them into. */
async function vendors(owner: Principal) {
  const a = await party(owner, { name: 'Suministros Andinos SAS', kind: 'vendor', tax_id: { type: 'NIT', number: '800197268-4' } });
  const b = await party(owner, { name: 'Logística Ñandú Ltda', kind: 'vendor', tax_id: { type: 'NIT', number: '900373115-3' } });
  const payees = [
    { vendor_id: a, account_number: '00112233445', account_type: 'savings', bank_code: '5600078', bic: 'COLOCOBM' },
    { vendor_id: b, account_number: '998877665544', account_type: 'checking', bank_code: '5100010' },
  ];
  return { a, b, payees };
}

/**
 * Three bills due by 20 Nov (one partly paid), one due later, one in USD. Hand figures:
 * FE-101: 1 × 1,000,000.00 + 19 % VAT 190,000.00 = 1,190,000.00, less retefuente 2.5 % of
 *   1,000,000.00 = 25,000.00 → owed 1,165,000.00 (116,500,000 cents).
 * FE-102: 2 × 250,000.00 = 500,000.00, 200,000.00 paid → 300,000.00 open (30,000,000).
 * INV-7:  3 × 45,000.50 = 135,001.50 (13,500,150).
 * Run total 116,500,000 + 30,000,000 + 13,500,150 = 160,000,150 cents = 1,600,001.50 COP, 3 transfers.
 */
async function threeBills(owner: Principal) {
  const v = await vendors(owner);
  const fe101 = await postedBill(sg, owner, v.a, {
    supplier_number: 'FE-101', issue_date: '2026-10-10', due_date: '2026-11-10', lines: line(100000000, 1, 190000), withholdings: [{ type: 'retefuente', rate_ppm: 25000 }],
  });
  const fe102 = await postedBill(sg, owner, v.a, { supplier_number: 'FE-102', issue_date: '2026-10-15', due_date: '2026-11-15', lines: line(25000000, 2) });
  const paid = await sg.call('bills.pay', { vendor_id: v.a, amount: 20000000, currency: 'COP', date: '2026-11-01', bills: [{ bill_id: fe102.id, amount: 20000000 }] }, owner);
  expect(paid.ok).toBe(true);
  const inv7 = await postedBill(sg, owner, v.b, { supplier_number: 'INV-7', issue_date: '2026-10-20', due_date: '2026-11-20', lines: line(4500050, 3) });
  const later = await postedBill(sg, owner, v.b, { supplier_number: 'INV-8', issue_date: '2026-11-01', due_date: '2026-12-31', lines: line(1000000) });
  const usd = await postedBill(sg, owner, v.b, { supplier_number: 'USD-1', currency: 'USD', issue_date: '2026-10-01', due_date: '2026-11-01', lines: line(50000) });
  return { ...v, fe101, fe102, inv7, later, usd };
}

async function makeRun(owner: Principal, payees: unknown[], input: Record<string, unknown> = {}) {
  const r = await sg.call('payment_runs.create', { currency: 'COP', bank_account: '111005', due_by: '2026-11-20', payment_date: '2026-11-21', debtor: DEBTOR, payees, ...input }, owner);
  if (!r.ok) throw new Error(`payment_runs.create failed: ${r.code} ${r.field} ${r.message}`);
  return r.output.payment_run;
}

const TOTAL = 116500000 + 30000000 + 13500150;

describe('payment runs: pick, approve, export, confirm', () => {
  it('a run of three bills (one partly paid): totals, pain.001 valid against the official XSD, the PAB file by position, confirm pays once', async () => {
    const owner = workspace();
    const t = await threeBills(owner);
    const run = await makeRun(owner, t.payees);
    expect(TOTAL).toBe(160000150);
    expect(run).toMatchObject({ status: 'draft', currency: 'COP', bank_account: '111005', count: 3, total: TOTAL, due_by: '2026-11-20' });
    expect(run.lines.map((l: any) => [l.supplier_number, l.amount])).toEqual([['FE-101', 116500000], ['FE-102', 30000000], ['INV-7', 13500150]]);
    expect(run.lines[0].vendor_tax_id).toBe('800197268');

    // Approve states the total; another figure is refused and changes nothing.
    expect(await sg.call('payment_runs.approve', { id: run.id, amount: TOTAL - 1 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await sg.call('payment_runs.export', { id: run.id, format: 'pain.001.001.03' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const approved = await sg.call('payment_runs.approve', { id: run.id, amount: TOTAL }, owner);
    expect(approved.output.payment_run).toMatchObject({ status: 'approved', approved_by: owner.actor.id });
    expect(await sg.call('payment_runs.approve', { id: run.id, amount: TOTAL }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('payment_runs.confirm', { id: run.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    // pain.001.001.03, checked by xmllint against the official schema and read back by an XML parser.
    const pain = await sg.call('payment_runs.export', { id: run.id, format: 'pain.001.001.03' }, owner);
    expect(pain.output.payment_run.status).toBe('exported');
    expect(pain.output.file).toMatchObject({ format: 'pain.001.001.03', media_type: 'application/xml', transactions: 3, control_sum: '1600001.50' });
    const check = xmllintValidate(pain.output.file.content, pain001Xsd());
    expect(check.output).toContain('validates');
    expect(check.valid).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => name === 'CdtTrfTxInf' }).parse(pain.output.file.content).Document.CstmrCdtTrfInitn;
    expect(doc.GrpHdr).toMatchObject({ MsgId: run.id, NbOfTxs: '3', CtrlSum: '1600001.50' });
    // Created at the workspace's local time (Colombia, UTC−5), with its offset: the export moment less five hours.
    const colombia = new Date(Date.parse(pain.output.payment_run.exported_at) - 5 * 3_600_000).toISOString();
    expect(doc.GrpHdr.CreDtTm).toBe(`${colombia.slice(0, 19)}-05:00`);
    expect(doc.PmtInf).toMatchObject({ PmtMtd: 'TRF', NbOfTxs: '3', CtrlSum: '1600001.50', ReqdExctnDt: '2026-11-21' });
    expect(doc.PmtInf.Dbtr.Nm).toBe('Cuadra Demo SAS');
    expect(doc.PmtInf.DbtrAcct.Id.Othr.Id).toBe('12345678901');
    const txs = doc.PmtInf.CdtTrfTxInf;
    expect(txs.map((x: any) => [x.Cdtr.Nm, x.Amt.InstdAmt['#text'], x.Amt.InstdAmt['@_Ccy'], x.CdtrAcct.Id.Othr.Id, x.RmtInf.Ustrd])).toEqual([
      ['Suministros Andinos SAS', '1165000.00', 'COP', '00112233445', 'Factura FE-101'],
      ['Suministros Andinos SAS', '300000.00', 'COP', '00112233445', 'Factura FE-102'],
      ['Logística Ñandú Ltda', '135001.50', 'COP', '998877665544', 'Factura INV-7'],
    ]);
    // 1,165,000.00 + 300,000.00 + 135,001.50 = 1,600,001.50: the control sum is the sum of the transfers.
    expect(txs.reduce((s: number, x: any) => s + Math.round(Number(x.Amt.InstdAmt['#text']) * 100), 0)).toBe(TOTAL);
    // A tampered file fails the same check: the validation is not vacuous.
    expect(xmllintValidate(pain.output.file.content.replace('<PmtMtd>TRF</PmtMtd>', '<PmtMtd>CASH</PmtMtd>'), pain001Xsd()).valid).toBe(false);
    // Exporting again answers the same bytes.
    expect((await sg.call('payment_runs.export', { id: run.id, format: 'pain.001.001.03' }, owner)).output.file.content).toBe(pain.output.file.content);

    // Bancolombia PAB: fixed-width records of 264 characters; fields read at their 1-based positions.
    const pab = await sg.call('payment_runs.export', { id: run.id, format: 'bancolombia_pab' }, owner);
    const records = pab.output.file.content.split('\r\n');
    expect(records.pop()).toBe('');
    expect(records).toHaveLength(4);
    for (const r of records) expect(r).toHaveLength(264);
    const at = (rec: string, from: number, to: number) => rec.slice(from - 1, to);
    const h = records[0];
    expect(at(h, 1, 1)).toBe('1');
    expect(at(h, 2, 16)).toBe('000000900373115');
    expect(at(h, 17, 17)).toBe('I');
    expect(at(h, 18, 32)).toBe(' '.repeat(15));
    expect(at(h, 33, 35)).toBe('220');
    // Transmission date: the workspace's calendar day (Colombia, UTC−5) of the export, worked out here from the UTC instant.
    expect(at(h, 46, 53)).toBe(new Date(Date.parse(pain.output.payment_run.exported_at) - 5 * 3_600_000).toISOString().slice(0, 10).replaceAll('-', ''));
    expect(at(h, 54, 55)).toBe('01');
    expect(at(h, 56, 63)).toBe('20261121');
    expect(at(h, 64, 69)).toBe('000003');
    expect(at(h, 70, 86)).toBe('0'.repeat(17));
    expect(at(h, 87, 103)).toBe('00000000160000150'); // 1,600,001.50 as 15 integer digits + 2 decimals
    expect(at(h, 104, 114)).toBe('12345678901');
    expect(at(h, 115, 115)).toBe('D');
    expect(at(h, 116, 264).trim()).toBe('');
    const d = records.slice(1);
    expect(d.map((r: string) => at(r, 1, 1))).toEqual(['6', '6', '6']);
    expect(d.map((r: string) => at(r, 2, 16))).toEqual(['000000800197268', '000000800197268', '000000900373115']);
    expect(at(d[2], 17, 46)).toBe('LOGISTICA NANDU LTDA'.padEnd(30, ' '));
    expect(d.map((r: string) => at(r, 47, 55))).toEqual(['005600078', '005600078', '005100010']);
    expect(d.map((r: string) => at(r, 56, 72))).toEqual(['00000000112233445', '00000000112233445', '00000998877665544']);
    expect(d.map((r: string) => at(r, 73, 75))).toEqual(['S37', 'S37', 'S27']);
    expect(d.map((r: string) => at(r, 76, 92))).toEqual(['00000000116500000', '00000000030000000', '00000000013500150']);
    expect(d.map((r: string) => at(r, 93, 100))).toEqual(['20261121', '20261121', '20261121']);
    expect(d.map((r: string) => at(r, 101, 121).trimEnd())).toEqual(['FE-101', 'FE-102', 'INV-7']);
    // Σ detail amounts = the control record's Σ credits.
    expect(d.reduce((s: number, r: string) => s + Number(at(r, 76, 92)), 0)).toBe(Number(at(h, 87, 103)));

    // Confirm: every bill paid through the bills path, one entry each (Dr 220505, Cr 111005).
    const confirmed = await sg.call('payment_runs.confirm', { id: run.id, paid_on: '2026-11-21' }, owner);
    expect(confirmed.output.payment_run).toMatchObject({ status: 'confirmed', paid_on: '2026-11-21' });
    const bill = async (id: string) => (await sg.call('bills.get', { id }, owner)).output.bill;
    expect(await bill(t.fe101.id)).toMatchObject({ status: 'paid', paid: 116500000, balance: 0 });
    expect(await bill(t.fe102.id)).toMatchObject({ status: 'paid', paid: 50000000, balance: 0 }); // 20,000,000 before + 30,000,000
    expect(await bill(t.inv7.id)).toMatchObject({ status: 'paid', paid: 13500150, balance: 0 });
    expect(await bill(t.later.id)).toMatchObject({ status: 'posted', balance: 1000000 });
    for (const l of run.lines) {
      const entry = await sg.db.collection('journal_entries').findOne({ _id: `je_${l.payment_id}` as never });
      expect(entry?.lines.map((x: any) => [x.account, x.debit, x.credit])).toEqual([['220505', l.amount, 0], ['111005', 0, l.amount]]);
      expect(entry?.date).toBe('2026-11-21');
    }
    // Confirming again is refused and pays nothing more.
    expect(await sg.call('payment_runs.confirm', { id: run.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(4); // the manual one + 3
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'bill_payment' })).toBe(4);
    expect(await sg.call('payment_runs.cancel', { id: run.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.db.collection('payment_run_claims').countDocuments({ workspace: owner.workspace })).toBe(0);
  });

  it('a confirm that died after confirming began is resumed, and confirms at once pay each bill once', async () => {
    const owner = workspace();
    const t = await threeBills(owner);
    const run = await makeRun(owner, t.payees);
    await sg.call('payment_runs.approve', { id: run.id, amount: run.total }, owner);
    await sg.call('payment_runs.export', { id: run.id, format: 'pain.001.001.03' }, owner);
    // As if a confirm died after step 2 and after paying the first bill (its payment id chosen by the run).
    await sg.db.collection('payment_runs').updateOne({ _id: run.id as never }, { $set: { status: 'confirming', paid_on: '2026-11-21' } });
    const answers = await Promise.all([1, 2, 3].map(() => sg.call('payment_runs.confirm', { id: run.id }, owner)));
    expect(answers.filter((r) => r.ok).length).toBeGreaterThanOrEqual(1);
    for (const r of answers.filter((x) => !x.ok)) expect(r.code).toBe('conflict');
    expect((await sg.call('payment_runs.get', { id: run.id }, owner)).output.payment_run.status).toBe('confirmed');
    for (const l of run.lines) {
      expect(await sg.db.collection('bill_payments').countDocuments({ _id: l.payment_id as never })).toBe(1);
      expect(await sg.db.collection('journal_entries').countDocuments({ _id: `je_${l.payment_id}` as never })).toBe(1);
    }
    expect((await sg.call('bills.get', { id: t.fe102.id }, owner)).output.bill).toMatchObject({ status: 'paid', paid: 50000000 });
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(4);
  });

  it('a hold policy with amount_over holds approve of a large run; a small run passes; the held call runs once approved', async () => {
    const owner = workspace();
    const t = await threeBills(owner);
    await sg.governance.policies.create(owner.workspace, {
      name: 'Pagos grandes', priority: 50, match: { tools: ['payment_runs.approve'] }, conditions: { amount_over: 100_000_000 }, effect: 'hold',
    }, 'pol_big_runs');
    const big = await makeRun(owner, t.payees);
    const held = await sg.call('payment_runs.approve', { id: big.id, amount: big.total }, owner);
    expect(held).toMatchObject({ ok: false, pending: true, httpStatus: 202 });
    expect((await sg.call('payment_runs.get', { id: big.id }, owner)).output.payment_run.status).toBe('draft');
    // A run under 1,000,000.00 COP is not held: INV-8 (10,000.00) alone.
    await sg.call('payment_runs.cancel', { id: big.id }, owner);
    const small = await makeRun(owner, t.payees, { due_by: undefined, bill_ids: [t.later.id] });
    expect(small.total).toBe(1000000);
    expect((await sg.call('payment_runs.approve', { id: small.id, amount: 1000000 }, owner)).output.payment_run.status).toBe('approved');
    // The held approval, decided by another person, runs once through the pipeline.
    const again = await makeRun(owner, t.payees);
    const held2 = await sg.call('payment_runs.approve', { id: again.id, amount: again.total }, owner);
    expect(held2.pending).toBe(true);
    await sg.governance.approvals.decide(owner.workspace, held2.approvalId!, 'approved', { type: 'member', id: 'mem_other' }, null);
    await sg.sweep();
    expect((await sg.call('payment_runs.get', { id: again.id }, owner)).output.payment_run).toMatchObject({ status: 'approved', total: TOTAL });
    const approval = await sg.governance.approvals.get(owner.workspace, held2.approvalId!);
    expect(approval?.status).toBe('executed');
  });

  it('refuses what does not fit, with code and field; cancel releases the bills', async () => {
    const owner = workspace();
    const t = await threeBills(owner);
    const create = (input: Record<string, unknown>) => sg.call('payment_runs.create', { currency: 'COP', bank_account: '111005', due_by: '2026-11-20', debtor: DEBTOR, payees: t.payees, ...input }, owner);
    expect(await create({ due_by: undefined })).toMatchObject({ ok: false, code: 'invalid_input', field: '' });
    expect(await create({ bill_ids: [t.fe101.id] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bill_ids' });
    expect(await create({ payees: [t.payees[0]] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/payees' });
    expect(await create({ payees: [t.payees[0], t.payees[0]] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/payees/1/vendor_id' });
    expect(await create({ due_by: '2026-10-01' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/due_by' });
    expect(await create({ bank_account: '110505' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bank_account' });
    expect(await create({ debtor: { ...DEBTOR, tax_id: '900.373.115' } })).toMatchObject({ ok: false, code: 'invalid_input', field: '/debtor/tax_id' });
    expect(await create({ due_by: undefined, bill_ids: ['bil_nope'] })).toMatchObject({ ok: false, code: 'not_found' });
    expect(await create({ due_by: undefined, bill_ids: [t.usd.id] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bill_ids/0' });
    expect(await create({ due_by: undefined, bill_ids: [t.fe101.id, t.fe101.id] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/bill_ids/1' });
    expect(await sg.db.collection('payment_run_claims').countDocuments({ workspace: owner.workspace })).toBe(0);

    const run = await makeRun(owner, t.payees);
    // Its bills are held: naming one for another run is refused; picking by date finds only what is free.
    expect(await create({ due_by: undefined, bill_ids: [t.inv7.id] })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await create({ due_by: '2026-11-20' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/due_by' });
    expect(await sg.call('payment_runs.export', { id: run.id, format: 'pain.001.002.03' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/format' });
    expect(await sg.call('payment_runs.approve', { id: 'prun_nope', amount: 1 }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('payment_runs.approve', { id: run.id }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await sg.call('payment_runs.confirm', { id: run.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const cancelled = await sg.call('payment_runs.cancel', { id: run.id }, owner);
    expect(cancelled.output.payment_run.status).toBe('cancelled');
    expect(await sg.call('payment_runs.approve', { id: run.id, amount: run.total }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    // Released: the same bills make a new run.
    const next = await makeRun(owner, t.payees);
    expect(next.total).toBe(TOTAL);

    // A bill of an exported run takes no payment outside it (issue 31: the bank file pays it).
    await sg.call('payment_runs.approve', { id: next.id, amount: TOTAL }, owner);
    await sg.call('payment_runs.export', { id: next.id, format: 'bancolombia_pab' }, owner);
    expect(await sg.call('bills.pay', { vendor_id: t.b, amount: 13500150, currency: 'COP', bills: [{ bill_id: t.inv7.id }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    // A bill changed outside the run all the same (as by a path from before holds existed): confirm refuses before paying anything.
    await sg.db.collection('bills').updateOne({ _id: t.inv7.id as never }, { $set: { balance: 0, paid: 13500150, status: 'paid' } });
    expect(await sg.call('payment_runs.confirm', { id: next.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('bills.get', { id: t.fe101.id }, owner)).output.bill).toMatchObject({ status: 'posted', paid: 0 });
    expect((await sg.call('payment_runs.get', { id: next.id }, owner)).output.payment_run.status).toBe('exported');

    // PAB pays in COP only.
    const usdRun = await makeRun(owner, t.payees, { currency: 'USD', bank_account: '111010', due_by: undefined, bill_ids: [t.usd.id] });
    await sg.call('payment_runs.approve', { id: usdRun.id, amount: 50000 }, owner);
    expect(await sg.call('payment_runs.export', { id: usdRun.id, format: 'bancolombia_pab' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/format' });
    expect((await sg.call('payment_runs.get', { id: usdRun.id }, owner)).output.payment_run.status).toBe('approved');
    const usdPain = await sg.call('payment_runs.export', { id: usdRun.id, format: 'pain.001.001.03' }, owner);
    expect(xmllintValidate(usdPain.output.file.content, pain001Xsd()).valid).toBe(true);
  });

  it('is sealed per workspace; the payment_runs and payment_formats sources answer', async () => {
    const owner = workspace();
    const t = await threeBills(owner);
    const run = await makeRun(owner, t.payees);
    const stranger = workspace();
    expect(await sg.call('payment_runs.get', { id: run.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('payment_runs.approve', { id: run.id, amount: run.total }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('payment_runs.cancel', { id: run.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect((await sg.call('payment_runs.list', {}, stranger)).output).toEqual({ rows: [], total: 0 });
    // Another workspace's run cannot take this workspace's bills by naming them.
    const sv = await vendors(stranger);
    expect(await sg.call('payment_runs.create', { currency: 'COP', bank_account: '111005', bill_ids: [t.fe101.id], debtor: DEBTOR, payees: sv.payees }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    const records = async (who: Principal, query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, who), 'invoicesRecords');
    expect((await records(owner, { source: 'payment_runs' })).rows.map((r: any) => [r.id, r.status, r.total, r.count])).toEqual([[run.id, 'draft', TOTAL, 3]]);
    expect((await records(owner, { source: 'payment_runs', search: 'ñandú' })).rows).toHaveLength(1);
    expect((await records(owner, { source: 'payment_runs', status: 'confirmed' })).rows).toHaveLength(0);
    await expect(records(owner, { source: 'payment_runs', status: 'paid' })).rejects.toMatchObject({ code: 'invalid_input', field: '/status' });
    expect((await records(stranger, { source: 'payment_runs' })).rows).toEqual([]);
    const formats = await records(owner, { source: 'payment_formats' });
    expect(formats.total).toBe(2);
    expect(formats.rows.map((r: any) => [r.id, r.kind, r.currencies])).toEqual([['pain.001.001.03', 'iso20022', null], ['bancolombia_pab', 'flat_file', ['COP']]]);
    expect((await records(owner, { source: 'payment_formats', kind: 'flat_file' })).rows.map((r: any) => r.id)).toEqual(['bancolombia_pab']);
    await expect(records(owner, { source: 'payment_formats', kind: 'csv' })).rejects.toMatchObject({ code: 'invalid_input', field: '/kind' });
  });
});
