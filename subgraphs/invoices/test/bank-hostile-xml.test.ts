// Issue 31, finding 5: a hostile XML statement is a deterministic refusal — 422 invalid_input at
// /content with nothing written, replayed as such under an Idempotency-Key — never 502, never an
// entity expanded or fetched. Every XML the product reads goes through shared/src/xml.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { parseXml, XmlError } from '@cuadra/shared/xml';
import { verifyXadesEpes } from '@cuadra/shared/xades';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { bankAccount, camt053, xmllint } from './bank-helpers.ts';
import { startInvoices } from './setup.ts';

let sg: TestSubgraph;
// A server standing in for what an external entity would name: it counts every request it gets.
let listener: Server;
let requests = 0;
let trap = '';
beforeAll(async () => {
  sg = await startInvoices();
  listener = createServer((_req, res) => {
    requests++;
    res.end('<x>leaked</x>');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  trap = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/entity`;
});
afterAll(async () => {
  await sg?.close();
  await new Promise((resolve) => listener?.close(resolve));
});

const IBAN = 'CO12345678901234';

/** An OFX 2.x statement (XML), with whatever comes between the declarations and `<OFX>`. */
const ofx2 = (prolog: string, name = 'Cliente Norte') => `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>
${prolog}<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STMTRS><CURDEF>COP</CURDEF>
<BANKACCTFROM><BANKID>007</BANKID><ACCTID>${IBAN}</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM>
<BANKTRANLIST><DTSTART>20261101</DTSTART><DTEND>20261130</DTEND>
<STMTTRN><TRNTYPE>CREDIT</TRNTYPE><DTPOSTED>20261112</DTPOSTED><TRNAMT>350000.00</TRNAMT><FITID>X-1</FITID><NAME>${name}</NAME></STMTTRN>
</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>`;

const camt = (info = 'Abono') => camt053({ id: 'S-X', iban: IBAN, currency: 'COP', entries: [{ ref: 'E-1', amount: '1000.00', sign: 'CRDT', date: '2026-11-12', info }] });
/** A camt.053 file with a DOCTYPE put before its root. */
const withDoctype = (xml: string, doctype: string) => xml.replace('<Document ', `${doctype}\n<Document `);

async function written(owner: Principal) {
  const [transactions, imports] = await Promise.all([
    sg.db.collection('bank_transactions').countDocuments({ workspace: owner.workspace }),
    sg.db.collection('bank_imports').countDocuments({ workspace: owner.workspace }),
  ]);
  return transactions + imports;
}

describe('hostile XML statements are refused 422, nothing written, nothing fetched', () => {
  const LAUGHS = `<!DOCTYPE Document [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">]>`;
  const cases: { name: string; format: 'ofx' | 'camt053'; content: () => string }[] = [
    { name: 'OFX 2.x with an external entity (was 502 outcome_unknown)', format: 'ofx', content: () => ofx2(`<!DOCTYPE OFX [<!ENTITY ext SYSTEM "${trap}">]>\n`, '&ext;') },
    { name: 'OFX 2.x with an external DTD', format: 'ofx', content: () => ofx2(`<!DOCTYPE OFX SYSTEM "${trap}">\n`) },
    { name: 'OFX 2.x with an internal entity', format: 'ofx', content: () => ofx2('<!DOCTYPE OFX [<!ENTITY n "Swapped">]>\n', '&n;') },
    { name: 'OFX 1.x (SGML) with a DOCTYPE in its body', format: 'ofx', content: () => `OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><!DOCTYPE x SYSTEM "${trap}"><BANKMSGSRSV1></BANKMSGSRSV1></OFX>` },
    { name: 'camt.053 with an internal entity (was expanded into the description)', format: 'camt053', content: () => withDoctype(camt('&swap;'), '<!DOCTYPE Document [<!ENTITY swap "Pago aprobado">]>') },
    { name: 'camt.053 with an external entity', format: 'camt053', content: () => withDoctype(camt('&ext;'), `<!DOCTYPE Document [<!ENTITY ext SYSTEM "${trap}">]>`) },
    { name: 'camt.053 with a billion laughs', format: 'camt053', content: () => withDoctype(camt('&e;'), LAUGHS) },
    { name: 'camt.053 with a DOCTYPE after a comment', format: 'camt053', content: () => camt().replace('<Document ', '<!-- hola --><!DOCTYPE Document>\n<Document ') },
  ];

  it.each(cases)('$name', async ({ format, content }) => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner, { account_number: IBAN });
    const before = requests;
    const r = await sg.call('bank.import_statement', { bank_id: bank, format, content: content() }, owner, { idempotencyKey: `hostile-${format}` });
    expect(r).toMatchObject({ ok: false, httpStatus: 422, code: 'invalid_input', field: '/content' });
    // The same key answers the same refusal again (not a 502 kept for good), and nothing was written.
    const again = await sg.call('bank.import_statement', { bank_id: bank, format, content: content() }, owner, { idempotencyKey: `hostile-${format}` });
    expect(again).toMatchObject({ ok: false, httpStatus: 422, code: 'invalid_input', field: '/content', replayed: true });
    expect(await written(owner)).toBe(0);
    expect(requests).toBe(before);
  });

  it('the same files without the DOCTYPE import as before (the refusal is of the DOCTYPE, nothing else)', async () => {
    const owner = testPrincipal();
    const bank = await bankAccount(sg, owner, { account_number: IBAN });
    expect(xmllint(camt('Pago &amp; abono'))).toBe('');
    const c = await sg.call('bank.import_statement', { bank_id: bank, format: 'camt053', content: camt('Pago &amp; abono') }, owner);
    expect(c.output.import).toMatchObject({ added: 1 });
    const o = await sg.call('bank.import_statement', { bank_id: bank, format: 'ofx', content: ofx2('', 'Norte &amp; Cia') }, owner);
    expect(o.output.import).toMatchObject({ added: 1 });
    const rows = await sg.db.collection('bank_transactions').find({ workspace: owner.workspace }).sort({ entry_id: 1 }).toArray();
    // 1,000.00 → 100,000 cents; 350,000.00 → 35,000,000 cents.
    expect(rows.map((t) => [t.entry_id, t.amount, t.description])).toEqual([['E-1', 100000, 'Pago & abono'], ['X-1', 35000000, 'Norte & Cia']]);
  });
});

describe('the one hardened XML reader (shared/src/xml.ts)', () => {
  it('refuses a DOCTYPE wherever the prolog puts it, before any entity is read', () => {
    for (const xml of [
      '<!DOCTYPE a><a/>',
      '<?xml version="1.0"?>\n<!-- c --> <?pi x?>\n<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
      '\uFEFF<!DOCTYPE a SYSTEM "http://127.0.0.1:9/x"><a/>',
      '<!doctype a><a/>',
    ]) expect(() => parseXml(xml), xml).toThrow(XmlError);
    // An undeclared entity, and a DOCTYPE after the root, are not well-formed: refused too.
    expect(() => parseXml('<a>&x;</a>')).toThrow(XmlError);
    expect(() => parseXml('<a/><!DOCTYPE a>')).toThrow(XmlError);
    // XML's own five entities and text that merely mentions a DOCTYPE are read.
    expect(parseXml('<a>&lt;!DOCTYPE&gt; &amp; <![CDATA[<!DOCTYPE b>]]></a>').textContent).toBe('<!DOCTYPE> & <!DOCTYPE b>');
  });

  it('a signature is not verified over a document with a DOCTYPE', () => {
    const check = verifyXadesEpes('<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', '', { policy: { url: '', hash: '' } as never, role: '', placement: () => null });
    expect(check).toMatchObject({ ok: false, missing: false });
  });

  it('no source file parses XML but through it (the payroll sandbox reads its object tree only after it)', () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const files: string[] = [];
    const walk = (dir: string) => {
      let entries;
      try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
      for (const e of entries) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts')) files.push(join(dir, e.name));
      }
    };
    for (const d of ['gateway/src', 'shared/src', ...readdirSync(join(root, 'subgraphs')).map((s) => `subgraphs/${s}/src`)]) walk(join(root, d));
    const parsers = files.filter((f) => /new DOMParser\(|new XMLParser\(|XMLValidator\.validate\(|xml2js|libxmljs|from 'sax'/.test(readFileSync(f, 'utf8'))).map((f) => f.slice(root.length)).sort();
    expect(parsers).toEqual(['shared/src/xml.ts', 'subgraphs/payroll/src/modules/payroll/epayroll_sandbox.ts']);
    const sandbox = readFileSync(join(root, 'subgraphs/payroll/src/modules/payroll/epayroll_sandbox.ts'), 'utf8');
    expect(sandbox.indexOf('parseXml(xml)')).toBeGreaterThan(-1);
    expect(sandbox.indexOf('parseXml(xml)')).toBeLessThan(sandbox.indexOf('parser.parse(xml)'));
  });
});
