import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { startInvoices } from './setup.ts';
import { bankAccount, camt053, xmllint } from './bank-helpers.ts';
import { bankTransactions } from '../src/modules/bank/model.ts';
import { importStatementTool } from '../src/modules/bank/tools/import_statement.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const IBAN = 'CO12345678901234';
const stored = async (bankId: string) => (await bankTransactions(sg.db).find({ bank_id: bankId }).lean())
  .sort((a, b) => a.date.localeCompare(b.date) || a.amount - b.amount)
  .map((t) => ({ date: t.date, amount: t.amount, description: t.description, reference: t.reference, entry_id: t.entry_id, statement_id: t.statement_id, status: t.status }));

/** The November statement: three booked entries and one pending (not imported). */
const NOVEMBER = camt053({
  id: 'STMT-2026-11', iban: IBAN, currency: 'COP', entries: [
    { ref: 'BCO-0001', amount: '1190000.00', sign: 'CRDT', date: '2026-11-05', info: 'Pago factura SETP990000001 Tienda Andina', e2e: 'SETP990000001' },
    { ref: 'BCO-0002', amount: '45000.50', sign: 'DBIT', date: '2026-11-07', info: 'Comision manejo cuenta' },
    { ref: 'BCO-0003', amount: '250000.99', sign: 'CRDT', date: '2026-11-09', info: 'Transferencia recibida' },
    { ref: 'BCO-0004', amount: '10.00', sign: 'DBIT', date: '2026-11-30', info: 'Pendiente', status: 'PDNG' },
  ],
});

describe('bank.import_statement: camt.053', () => {
  it('is valid against the official XSD (xmllint), imports 3 booked entries in signed cents, and a second import adds 0', async () => {
    expect(() => xmllint(NOVEMBER)).not.toThrow();
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner);
    const first = await sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', content: NOVEMBER }, owner);
    expect(first.ok).toBe(true);
    checkOutput('bank.import_statement', importStatementTool.output, first.output);
    expect(first.output.import).toMatchObject({ statement_id: 'STMT-2026-11', entries: 3, added: 3, already_there: 0, skipped: 1 });
    // By hand: 1,190,000.00 COP = 119,000,000 cents in; 45,000.50 = 4,500,050 cents out; 250,000.99 = 25,000,099 in.
    expect(await stored(bank)).toEqual([
      { date: '2026-11-05', amount: 119000000, description: 'Pago factura SETP990000001 Tienda Andina', reference: 'SETP990000001', entry_id: 'BCO-0001', statement_id: 'STMT-2026-11', status: 'unreconciled' },
      { date: '2026-11-07', amount: -4500050, description: 'Comision manejo cuenta', reference: null, entry_id: 'BCO-0002', statement_id: 'STMT-2026-11', status: 'unreconciled' },
      { date: '2026-11-09', amount: 25000099, description: 'Transferencia recibida', reference: null, entry_id: 'BCO-0003', statement_id: 'STMT-2026-11', status: 'unreconciled' },
    ]);
    const again = await sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', content: NOVEMBER }, owner);
    expect(again.output.import).toMatchObject({ entries: 3, added: 0, already_there: 3 });
    expect(await stored(bank)).toHaveLength(3);
    // The next statement overlaps the first by one entry: 1 new, 1 already there.
    const december = camt053({ id: 'STMT-2026-12', iban: IBAN, currency: 'COP', entries: [
      { ref: 'BCO-0003', amount: '250000.99', sign: 'CRDT', date: '2026-11-09', info: 'Transferencia recibida' },
      { ref: 'BCO-0005', amount: '1.00', sign: 'DBIT', date: '2026-12-01', info: 'GMF 4x1000' },
    ] });
    expect((await sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', content: december }, owner)).output.import).toMatchObject({ added: 1, already_there: 1 });
    expect(await stored(bank)).toHaveLength(4);
  });

  it('refuses a file that is not what it says, another account, another currency, and too much', async () => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner);
    const call = (input: Record<string, unknown>) => sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', ...input }, owner);
    // An entry without its credit/debit indicator: the XSD says no (and xmllint agrees).
    const broken = NOVEMBER.replace('<CdtDbtInd>DBIT</CdtDbtInd>', '');
    expect(() => xmllint(broken)).toThrow();
    const r = await call({ content: broken });
    expect(r).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(r.message).toContain('XSD');
    expect(await call({ content: 'not xml at all' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    // camt.054 (a notification), or an OFX file, given as camt.053.
    expect(await call({ content: NOVEMBER.replace('camt.053.001.02', 'camt.054.001.02') })).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call({ content: camt053({ id: 'X', iban: 'CO99999999999999', currency: 'COP', entries: [] }) })).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    const usd = camt053({ id: 'U', iban: IBAN, currency: 'USD', entries: [{ ref: 'U1', amount: '1.00', sign: 'CRDT', date: '2026-11-01', info: 'x' }] });
    const wrongCurrency = await call({ content: usd });
    expect(wrongCurrency).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(wrongCurrency.message).toContain('USD');
    // COP has 2 decimals: 1.005 is refused, not rounded.
    expect(await call({ content: NOVEMBER.replace('45000.50', '45000.505') })).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call({ content: 'x'.repeat(1024 * 1024 + 1) })).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call({ content: NOVEMBER, csv: { date: 'a', description: 'b' } })).toMatchObject({ ok: false, code: 'invalid_input', field: '/csv' });
    expect(await call({ format: 'mt940', content: NOVEMBER })).toMatchObject({ ok: false, code: 'invalid_input', field: '/format' });
    expect(await stored(bank)).toEqual([]);
    // Another workspace cannot import into this account.
    expect(await sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', content: NOVEMBER }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
  });
});

const OFX_SGML = `OFXHEADER:100
DATA:OFXSGML
VERSION:102
SECURITY:NONE
ENCODING:USASCII
CHARSET:1252
COMPRESSION:NONE
OLDFILEUID:NONE
NEWFILEUID:NONE

<OFX>
<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20261130120000<LANGUAGE>SPA</SONRS></SIGNONMSGSRSV1>
<BANKMSGSRSV1>
<STMTTRNRS>
<TRNUID>1001
<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<STMTRS>
<CURDEF>COP
<BANKACCTFROM><BANKID>007<ACCTID>CO12345678901234<ACCTTYPE>CHECKING</BANKACCTFROM>
<BANKTRANLIST>
<DTSTART>20261101
<DTEND>20261130
<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20261112120000[-5:COT]<TRNAMT>350000.00<FITID>OFX-77<NAME>Cliente Norte &amp; Cia<MEMO>Abono factura</STMTTRN>
<STMTTRN>
<TRNTYPE>DEBIT
<DTPOSTED>20261113
<TRNAMT>-12500.25
<FITID>OFX-78
<NAME>Papeleria
<CHECKNUM>0042
</STMTTRN>
</BANKTRANLIST>
<LEDGERBAL><BALAMT>337499.75<DTASOF>20261130</LEDGERBAL>
</STMTRS>
</STMTTRNRS>
</BANKMSGSRSV1>
</OFX>
`;

describe('bank.import_statement: OFX and CSV', () => {
  it('reads OFX 1.x SGML (unclosed leaves) and imports it once', async () => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner);
    const r = await sg.call('bank.import_statement', { bank_id: bank, format: 'ofx', content: OFX_SGML }, owner);
    expect(r.ok).toBe(true);
    expect(r.output.import).toMatchObject({ statement_id: 'CO12345678901234:2026-11-01/2026-11-30', entries: 2, added: 2, already_there: 0 });
    // By hand: 350,000.00 → 35,000,000 cents; −12,500.25 → −1,250,025 cents.
    expect(await stored(bank)).toMatchObject([
      { date: '2026-11-12', amount: 35000000, description: 'Cliente Norte & Cia — Abono factura', entry_id: 'OFX-77', reference: null },
      { date: '2026-11-13', amount: -1250025, description: 'Papeleria', entry_id: 'OFX-78', reference: '0042' },
    ]);
    expect((await sg.call('bank.import_statement', { bank_id: bank, format: 'ofx', content: OFX_SGML }, owner)).output.import).toMatchObject({ added: 0, already_there: 2 });
    const call = (content: string) => sg.call('bank.import_statement', { bank_id: bank, format: 'ofx', content }, owner);
    expect(await call(NOVEMBER)).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call(OFX_SGML.replace('</STMTTRNRS>', '</STMTRS>'))).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call(OFX_SGML.replace('<FITID>OFX-78', ''))).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call(OFX_SGML.replace('<CURDEF>COP', '<CURDEF>EUR'))).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
  });

  it('reads a CSV through its column mapping; rows without an id are keyed by their fields, so a re-import adds 0', async () => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner);
    const csv = 'Fecha;Descripción;Referencia;Débito;Crédito\n'
      + '03/11/2026;Pago proveedor Aseo;B-1;119000,00;\n'
      + '04/11/2026;Tinto oficina;;3500,00;\n'
      + '04/11/2026;Tinto oficina;;3500,00;\n'
      + '06/11/2026;"Abono cliente; Norte";INV-9;;80000,10\n';
    const mapping = { date: 'Fecha', description: 'Descripción', reference: 'Referencia', debit: 'Débito', credit: 'Crédito', date_format: 'DD/MM/YYYY', decimal_separator: ',', delimiter: ';' };
    const r = await sg.call('bank.import_statement', { bank_id: bank, format: 'csv', content: csv, csv: mapping, statement_id: 'EXTRACTO-NOV' }, owner);
    expect(r.ok).toBe(true);
    expect(r.output.import).toMatchObject({ statement_id: 'EXTRACTO-NOV', entries: 4, added: 4, already_there: 0 });
    // By hand: −119,000.00 → −11,900,000; two equal coffees −3,500.00 → −350,000 each (two lines, not one); +80,000.10 → 8,000,010.
    expect((await stored(bank)).map((t) => [t.date, t.amount, t.description, t.reference])).toEqual([
      ['2026-11-03', -11900000, 'Pago proveedor Aseo', 'B-1'],
      ['2026-11-04', -350000, 'Tinto oficina', null],
      ['2026-11-04', -350000, 'Tinto oficina', null],
      ['2026-11-06', 8000010, 'Abono cliente; Norte', 'INV-9'],
    ]);
    expect((await sg.call('bank.import_statement', { bank_id: bank, format: 'csv', content: csv, csv: mapping }, owner)).output.import).toMatchObject({ added: 0, already_there: 4 });
    const call = (content: string, over: Record<string, unknown> = {}) => sg.call('bank.import_statement', { bank_id: bank, format: 'csv', content, csv: { ...mapping, ...over } }, owner);
    expect(await call(csv, { date: 'Date' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/csv/date' });
    expect(await call(csv, { debit: undefined, credit: undefined })).toMatchObject({ ok: false, code: 'invalid_input', field: '/csv/amount' });
    expect(await call(csv.replace('03/11/2026', '31/02/2026'))).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call(csv.replace('119000,00', '119.000,00'))).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await call(csv + '07/11/2026;x;"unterminated;1,00;\n')).toMatchObject({ ok: false, code: 'invalid_input', field: '/content' });
    expect(await sg.call('bank.import_statement', { bank_id: bank, format: 'csv', content: csv }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/csv' });
  });
});

describe('records source bank_transactions', () => {
  const records = async (owner: ReturnType<typeof testPrincipal>, query: Record<string, unknown>) => {
    const r = await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner);
    if (r.body.errors?.length) throw Object.assign(new Error(r.body.errors[0].message), { code: r.body.errors[0].extensions?.code, field: r.body.errors[0].extensions?.field });
    return r.body.data.invoicesRecords;
  };

  it('filters by kind, status, account (ref) and search, pages by cursor, and is sealed to the workspace', async () => {
    const owner = testPrincipal();
    const a = await bankAccount(sg, owner);
    const b = await bankAccount(sg, owner, { name: 'Ahorros', account_number: '555-000-111' });
    await sg.call('bank.import_statement', { bank_id: a, format: 'camt053', content: NOVEMBER }, owner);
    await sg.call('bank.import_statement', { bank_id: b, format: 'csv', content: 'date,amount,text\n2026-11-20,-99.99,Cuota manejo\n', csv: { date: 'date', amount: 'text', description: 'text' } }, owner)
      .then((r) => expect(r).toMatchObject({ ok: false, field: '/content' })); // "Cuota manejo" is not an amount
    await sg.call('bank.import_statement', { bank_id: b, format: 'csv', content: 'date,amount,text\n2026-11-20,-99.99,Cuota manejo\n', csv: { date: 'date', amount: 'amount', description: 'text' } }, owner);
    const all = await records(owner, { source: 'bank_transactions' });
    expect(all.total).toBe(4);
    expect(all.rows.map((t: any) => t.amount)).toEqual([-9999, 25000099, -4500050, 119000000]);
    expect((await records(owner, { source: 'bank_transactions', kind: 'debit' })).rows.map((t: any) => t.amount)).toEqual([-9999, -4500050]);
    expect((await records(owner, { source: 'bank_transactions', kind: 'credit', ref: a })).rows.map((t: any) => t.amount)).toEqual([25000099, 119000000]);
    expect((await records(owner, { source: 'bank_transactions', ref: b })).rows.map((t: any) => [t.description, t.kind, t.status])).toEqual([['Cuota manejo', 'debit', 'unreconciled']]);
    expect((await records(owner, { source: 'bank_transactions', status: 'unmatched' })).rows).toHaveLength(4);
    expect((await records(owner, { source: 'bank_transactions', status: 'reconciled' })).rows).toEqual([]);
    expect((await records(owner, { source: 'bank_transactions', search: 'setp990000001' })).rows.map((t: any) => t.amount)).toEqual([119000000]);
    const page = await records(owner, { source: 'bank_transactions', limit: 3 });
    expect(page.rows).toHaveLength(3);
    const next = await records(owner, { source: 'bank_transactions', limit: 3, cursor: page.next_cursor });
    expect(next.rows.map((t: any) => t.amount)).toEqual([119000000]);
    expect(next.next_cursor).toBeUndefined();
    await expect(records(owner, { source: 'bank_transactions', kind: 'incoming' })).rejects.toMatchObject({ code: 'invalid_input', field: '/kind' });
    await expect(records(owner, { source: 'bank_transactions', status: 'paid' })).rejects.toMatchObject({ code: 'invalid_input', field: '/status' });
    await expect(records(owner, { source: 'bank_transactions', ref: 'bnk_nope' })).rejects.toMatchObject({ code: 'invalid_input', field: '/ref' });
    const stranger = testPrincipal();
    expect(await records(stranger, { source: 'bank_transactions' })).toMatchObject({ rows: [], total: 0 });
    await expect(records(stranger, { source: 'bank_transactions', ref: a })).rejects.toMatchObject({ code: 'invalid_input', field: '/ref' });
  });
});
