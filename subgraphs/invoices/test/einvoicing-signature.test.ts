import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { dumpDatabase, type TestSubgraph } from '@cuadra/shared/testing';
import { makeP12, xmlsecVerify } from '@cuadra/shared/testing/signatures';
import { configuredWorkspace, draft, draftToday, startInvoices } from './setup.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'einv-sig-'));

function unescapeXml(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

const amount = (cents: number) => (cents / 100).toFixed(2);

describe('e-invoicing: XAdES-EPES signature, the sandbox\'s check, the QR code', () => {
  let sg: TestSubgraph;
  // Sealing key: the one setup.ts gives the services through the environment, as in production.
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  async function signedWorkspace(): Promise<{ owner: Principal; p12: ReturnType<typeof makeP12>; password: string }> {
    const owner = await configuredWorkspace(sg);
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const p12 = makeP12({ password });
    const r = await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password }, owner);
    expect(r.ok, r.message).toBe(true);
    return { owner, p12, password };
  }

  async function postedInvoice(owner: Principal) {
    // Dated today: a signed document goes to DIAN the day it is signed (FAD09e).
    const inv = await draftToday(sg, owner);
    const posted = await sg.call('invoices.post', { id: inv.id }, owner);
    expect(posted.ok, posted.message).toBe(true);
    return posted.output.invoice;
  }

  async function ubl(owner: Principal, id: string): Promise<string> {
    const r = await sg.call('invoices.render', { id, format: 'ubl' }, owner);
    expect(r.ok, r.message).toBe(true);
    return r.output.content as string;
  }

  const sandbox = (xml: string) => fetch(`${sg.url}/einvoicing/sandbox`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml }).then((r) => r.json() as Promise<any>);

  it('refuses a certificate that is not base64, not PKCS#12, under a wrong password, or expired, naming the field', async () => {
    const owner = await configuredWorkspace(sg);
    const good = makeP12({ password: 'correcto' });
    const expired = makeP12({ password: 'x', from: new Date(Date.now() - 800 * 86_400_000), to: new Date(Date.now() - 86_400_000) });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ p12_base64: 'esto no es base64!!', password: 'x' }, '/p12_base64', /base64/],
      [{ p12_base64: Buffer.from('not a certificate at all').toString('base64'), password: 'x' }, '/p12_base64', /PKCS#12/],
      [{ p12_base64: good.base64, password: 'incorrecto' }, '/password', /password/],
      [{ p12_base64: expired.base64, password: 'x' }, '/p12_base64', /expired/],
    ];
    for (const [input, field, message] of cases) {
      const r = await sg.call('einvoicing.upload_certificate', input, owner);
      expect(r.ok).toBe(false);
      expect(r.code).toBe('invalid_input');
      expect(r.field).toBe(field);
      expect(r.message).toMatch(message);
    }
    // Nothing was kept from the refused uploads.
    expect(await sg.db.collection('einvoicing_certificates').countDocuments({ _id: owner.workspace } as never)).toBe(0);
  });

  it('keeps the key sealed and never gives back the file, the password or the key: not in answers, replays, idempotency records or the ledger', async () => {
    const owner = await configuredWorkspace(sg);
    const password = `secreto-${randomBytes(8).toString('hex')}`;
    const p12 = makeP12({ password, cn: 'Firma Demo' });
    const first = await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password }, owner, { idempotencyKey: 'cert-1' });
    expect(first.ok, first.message).toBe(true);
    expect(Object.keys(first.output.certificate).sort()).toEqual(['issuer', 'not_after', 'serial', 'subject']);
    expect(first.output.certificate.subject).toBe('C=CO,O=Cuadra Demo SAS,CN=Firma Demo');
    expect(first.output.certificate.serial).toBe(BigInt(`0x${p12.cert.serialNumber}`).toString(10));
    // X.509 keeps whole seconds.
    expect(first.output.certificate.not_after).toBe(new Date(Math.floor(p12.cert.validity.notAfter.getTime() / 1000) * 1000).toISOString());
    const replay = await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password }, owner, { idempotencyKey: 'cert-1' });
    expect(replay.replayed).toBe(true);
    expect(replay.output).toEqual(first.output);

    const keyBody = p12.keyPem.split('\n').slice(1, 4).join('');
    const secrets = [password, p12.base64.slice(100, 160), keyBody.slice(0, 60)];
    const texts = [JSON.stringify(first), JSON.stringify(replay), await dumpDatabase(sg.db), await dumpDatabase(sg.governance.db)];
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret)).toBe(false);
    // The ledger did record both calls (so the scan above looked where they are).
    expect(await sg.governance.db.collection('ledger').countDocuments({ tool: 'einvoicing.upload_certificate' })).toBeGreaterThanOrEqual(2);
    const stored = await sg.db.collection('einvoicing_certificates').findOne({ _id: owner.workspace } as never);
    expect(stored?.key_sealed).toMatch(/^v1\./);
  });

  it('signs the posted invoice as DIAN\'s policy asks, and xmlsec1 verifies it against the uploaded certificate', async () => {
    const { owner, p12 } = await signedWorkspace();
    const inv = await postedInvoice(owner);
    const xml = await ubl(owner, inv.id);
    // Signed at posting, and kept: every render is the same document.
    expect(await ubl(owner, inv.id)).toBe(xml);
    const verified = await xmlsecVerify(xml, p12.certPem);
    expect(verified.output).toMatch(/OK/);
    expect(verified.ok).toBe(true);
    // Placement and the XAdES-EPES properties DIAN's policy names.
    expect(xml).toMatch(/<\/sts:DianExtensions><\/ext:ExtensionContent><\/ext:UBLExtension><ext:UBLExtension><ext:ExtensionContent><ds:Signature /);
    expect(xml).toContain('<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>');
    expect(xml).toContain('<xades:Identifier>https://facturaelectronica.dian.gov.co/politicadefirma/v2/politicadefirmav2.pdf</xades:Identifier>');
    expect(xml).toContain('<ds:DigestValue>dMoMvtcG5aIzgYo0tIsSQeVJBDnUnfSOfBpxXrmor0Y=</ds:DigestValue>');
    expect(xml).toContain('<xades:ClaimedRole>supplier</xades:ClaimedRole>');
    expect(xml).toMatch(/<xades:SigningTime>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}-05:00<\/xades:SigningTime>/);
    // The sandbox accepts it, and so does invoices.send.
    const sent = await sg.call('invoices.send', { id: inv.id }, owner);
    expect(sent.ok, sent.message).toBe(true);
    expect(sent.output.authority.is_valid).toBe(true);
    expect(sent.output.xml_bytes).toBe(Buffer.byteLength(xml));
  });

  it('signs a credit note too (CreditNote root, CUDE), verified by xmlsec1 and accepted by the sandbox', async () => {
    const { owner, p12 } = await signedWorkspace();
    const inv = await postedInvoice(owner);
    const r = await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 2, reason: 'anulación' }, owner);
    expect(r.ok, r.message).toBe(true);
    const xml = await ubl(owner, r.output.credit_note.id);
    expect(xml).toMatch(/^<\?xml[^>]*\?><CreditNote /);
    expect((await xmlsecVerify(xml, p12.certPem)).ok).toBe(true);
    const sent = await sg.call('invoices.send', { id: r.output.credit_note.id }, owner);
    expect(sent.output?.authority, sent.message).toMatchObject({ is_valid: true, errors: [] });
  });

  it('a signed invoice with one amount changed is refused by xmlsec1 and by the sandbox; so is a missing or a foreign signature', async () => {
    const { owner, p12 } = await signedWorkspace();
    const inv = await postedInvoice(owner);
    const xml = await ubl(owner, inv.id);
    expect((await sandbox(xml)).is_valid).toBe(true);

    // One amount: the price of the line, which no total depends on, so only the signature can tell.
    const price = `<cbc:PriceAmount currencyID="COP">${amount(inv.lines[0].unit_price)}</cbc:PriceAmount>`;
    expect(xml).toContain(price);
    const tampered = xml.replace(price, `<cbc:PriceAmount currencyID="COP">${amount(inv.lines[0].unit_price - 100)}</cbc:PriceAmount>`);
    const byXmlsec = await xmlsecVerify(tampered, p12.certPem);
    expect(byXmlsec.ok).toBe(false);
    expect(byXmlsec.output).toMatch(/FAIL|failed/);
    const answer = await sandbox(tampered);
    expect(answer.is_valid).toBe(false);
    expect(answer.status_code).toBe('99');
    expect(answer.errors).toEqual([expect.stringMatching(/^Regla: ZE02, Rechazo: /)]);

    // Unsigned, while the issuer registered a certificate.
    const unsigned = xml.replace(/<ext:UBLExtension><ext:ExtensionContent><ds:Signature [\s\S]*<\/ds:Signature><\/ext:ExtensionContent><\/ext:UBLExtension>/, '');
    expect(unsigned).not.toContain('ds:Signature');
    expect((await sandbox(unsigned)).errors).toEqual([expect.stringMatching(/^Regla: FAA02, Rechazo: /)]);

    // Signed with a key and certificate that are not the ones the issuer registered.
    const other = await signedWorkspace();
    const foreign = await ubl(other.owner, (await postedInvoice(other.owner)).id);
    const signature = /<ext:UBLExtension><ext:ExtensionContent><ds:Signature [\s\S]*<\/ds:Signature><\/ext:ExtensionContent><\/ext:UBLExtension>/;
    const swapped = xml.replace(signature, foreign.match(signature)![0]);
    expect((await xmlsecVerify(swapped, other.p12.certPem)).ok).toBe(false);
    expect((await sandbox(swapped)).errors).toEqual([expect.stringMatching(/^Regla: ZE02, Rechazo: .*certificado/)]);
  });

  it('puts DIAN\'s QR text in sts:QRCode, and the PNG decodes with zbarimg to exactly that text', async () => {
    const { owner } = await signedWorkspace();
    const inv = await postedInvoice(owner);
    const expected = [
      `NumFac: ${inv.number}`, `FecFac: ${inv.issue_date}`, `HorFac: ${inv.issue_time}`, 'NitFac: 900373115', 'DocAdq: 800197268',
      `ValFac: ${amount(inv.subtotal)}`, `ValIva: ${amount(inv.tax_total)}`, 'ValOtroIm: 0.00', `ValTolFac: ${amount(inv.total)}`,
      `CUFE: ${inv.cufe}`, `QRCode: https://catalogo-vpfe-hab.dian.gov.co/document/searchqr?documentkey=${inv.cufe}`,
    ].join('\n');
    expect(inv.subtotal).toBe(30000000);
    const xml = await ubl(owner, inv.id);
    expect(unescapeXml(/<sts:QRCode>([\s\S]*?)<\/sts:QRCode>/.exec(xml)![1])).toBe(expected);
    const r = await sg.call('einvoicing.qr', { id: inv.id }, owner);
    expect(r.ok, r.message).toBe(true);
    expect(r.output.content).toBe(expected);
    const png = join(dir, `qr-${inv.id}.png`);
    writeFileSync(png, Buffer.from(r.output.png_base64, 'base64'));
    expect(readFileSync(png).subarray(1, 4).toString()).toBe('PNG');
    const { stdout } = await run('zbarimg', ['--quiet', '--raw', '-Sbinary', png]);
    expect(stdout.replace(/\n$/, '')).toBe(expected);
    // A draft has none.
    const d = await draft(sg, owner);
    expect((await sg.call('einvoicing.qr', { id: d.id }, owner)).code).toBe('conflict');
  });

  it('once the certificate lapses, what it signed still goes out, and a new document is refused with a reason and not marked as submitted', async () => {
    const { owner } = await signedWorkspace();
    const signedBefore = await postedInvoice(owner);
    await sg.db.collection('einvoicing_certificates').updateOne({ _id: owner.workspace } as never, { $set: { not_after: new Date(Date.now() - 1000) } });
    // Posting does not depend on the certificate: the invoice is posted, only not signed yet.
    const after = await postedInvoice(owner);
    expect(after.status).toBe('posted');
    const refused = await sg.call('invoices.send', { id: after.id }, owner);
    expect(refused.code).toBe('conflict');
    expect(refused.message).toMatch(/expired.*einvoicing\.upload_certificate/);
    expect((await sg.db.collection('invoices').findOne({ _id: after.id } as never))?.authority ?? null).toBe(null);
    // Signed at posting while the certificate was valid: that signature stands.
    const sent = await sg.call('invoices.send', { id: signedBefore.id }, owner);
    expect(sent.ok, sent.message).toBe(true);
    expect(sent.output.authority.is_valid).toBe(true);
  });
});
