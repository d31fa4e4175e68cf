import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { DOMParser, type Element } from '@xmldom/xmldom';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { cdata } from '../src/e-documents/attached.ts';
import { attachedDocument } from '../src/modules/invoices/tools/attached_document.ts';
import { configuredWorkspace, draft, draftToday, startInvoices } from './setup.ts';

/** A self-signed certificate and key in a PKCS#12 file, as a CA would hand one out. */
function makeP12(password: string): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 86_400_000);
  const name = [{ name: 'commonName', value: 'Cuadra Demo SAS' }, { name: 'countryName', value: 'CO' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.sign(key, forge.md.sha256.create());
  return Buffer.from(forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(key, cert, password, { algorithm: '3des' })).getBytes(), 'binary').toString('base64');
}

const NS = {
  ad: 'urn:oasis:names:specification:ubl:schema:xsd:AttachedDocument-2',
  ar: 'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
};

/** Parses with @xmldom/xmldom, failing on any error or warning (not our own parser). */
function parse(xml: string): Element {
  const errors: string[] = [];
  const doc = new DOMParser({ onError: (level, msg) => { errors.push(`${level}: ${msg}`); } }).parseFromString(xml, 'text/xml');
  expect(errors).toEqual([]);
  return doc.documentElement as unknown as Element;
}

/** The element children of `el` in namespace `ns` with local name `name`. */
function kids(el: Element, ns: keyof typeof NS, name: string): Element[] {
  return Array.from(el.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === NS[ns] && (n as Element).localName === name);
}

function one(el: Element, path: string): Element {
  let cur = el;
  for (const step of path.split('/')) {
    const [ns, name] = step.split(':') as [keyof typeof NS, string];
    const found = kids(cur, ns, name);
    expect(found, path).toHaveLength(1);
    cur = found[0];
  }
  return cur;
}

describe('invoices.attached_document: DIAN’s container for the buyer', () => {
  let sg: TestSubgraph;
  // Sealing key: the one setup.ts gives the services through the environment, as in production.
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  it('is built when the authority accepts: the signed invoice byte for byte and the ApplicationResponse in CDATA, parties and CUFE', async () => {
    const owner = await configuredWorkspace(sg);
    const up = await sg.call('einvoicing.upload_certificate', { p12_base64: makeP12('clave'), password: 'clave' }, owner);
    expect(up.ok, up.message).toBe(true);
    // Dated today: a signed document goes to DIAN the day it is signed (FAD09e).
    const inv = await draftToday(sg, owner, { notes: 'Entrega ]]> parcial <b>' });
    await sg.call('invoices.post', { id: inv.id }, owner);
    expect(await sg.call('invoices.attached_document', { id: inv.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const sent = await sg.call('invoices.send', { id: inv.id }, owner);
    expect(sent.ok, sent.message).toBe(true);
    expect(sent.output.authority).not.toHaveProperty('application_response');
    const got = sent.output.invoice;

    const r = await sg.call('invoices.attached_document', { id: inv.id }, owner);
    expect(r.ok, r.message).toBe(true);
    checkOutput('invoices.attached_document', attachedDocument.output, r.output);
    expect(r.output).toMatchObject({ id: inv.id, number: got.number, content_type: 'application/xml', filename: `ad${got.number}.xml`, track_id: sent.output.authority.track_id });

    const signed = (await sg.db.collection('einvoicing_signed').findOne({ _id: inv.id } as never))!.xml as string;
    expect(signed).toContain('<ds:Signature');
    expect((await sg.call('invoices.render', { id: inv.id, format: 'ubl' }, owner)).output.content).toBe(signed);

    const root = parse(r.output.content);
    expect(root.namespaceURI).toBe(NS.ad);
    expect(root.localName).toBe('AttachedDocument');
    expect(one(root, 'cbc:UBLVersionID').textContent).toBe('UBL 2.1');
    expect(one(root, 'cbc:CustomizationID').textContent).toBe('Documentos adjuntos');
    expect(one(root, 'cbc:ID').textContent).toBe(got.number);
    expect(one(root, 'cbc:UUID').textContent).toBe(got.cufe);
    expect(one(root, 'cbc:UUID').getAttribute('schemeName')).toBe('CUFE-SHA384');
    expect(one(root, 'cbc:DocumentType').textContent).toBe('Contenedor de Factura Electrónica');
    expect(one(root, 'cbc:ParentDocumentID').textContent).toBe(got.number);
    expect(one(root, 'cac:SenderParty/cac:PartyTaxScheme/cbc:RegistrationName').textContent).toBe('CUADRA DEMO S.A.S.');
    const sender = one(root, 'cac:SenderParty/cac:PartyTaxScheme/cbc:CompanyID');
    expect([sender.textContent, sender.getAttribute('schemeID'), sender.getAttribute('schemeName')]).toEqual(['900373115', '3', '31']);
    expect(one(root, 'cac:ReceiverParty/cac:PartyTaxScheme/cbc:RegistrationName').textContent).toBe('TIENDA ANDINA S.A.S.');
    // Each party as the invoice names it: its fiscal responsibilities (TaxLevelCode) and tax.
    expect(one(root, 'cac:SenderParty/cac:PartyTaxScheme/cbc:TaxLevelCode').textContent).toBe('O-15');
    expect(one(root, 'cac:ReceiverParty/cac:PartyTaxScheme/cbc:TaxLevelCode').textContent).toBe('O-13;O-23');
    const receiver = one(root, 'cac:ReceiverParty/cac:PartyTaxScheme/cbc:CompanyID');
    expect([receiver.textContent, receiver.getAttribute('schemeID'), receiver.getAttribute('schemeName')]).toEqual(['800197268', '4', '31']);

    // The embedded invoice is the signed one, byte for byte (UTF-8 bytes compared).
    const embedded = one(root, 'cac:Attachment/cac:ExternalReference/cbc:Description').textContent ?? '';
    expect(Buffer.from(embedded, 'utf8').equals(Buffer.from(signed, 'utf8'))).toBe(true);
    expect(one(root, 'cac:Attachment/cac:ExternalReference/cbc:MimeCode').textContent).toBe('text/xml');

    const line = one(root, 'cac:ParentDocumentLineReference');
    expect(one(line, 'cbc:LineID').textContent).toBe('1');
    const ref = one(line, 'cac:DocumentReference');
    expect(one(ref, 'cbc:ID').textContent).toBe(got.number);
    expect(one(ref, 'cbc:UUID').textContent).toBe(got.cufe);
    expect(one(ref, 'cbc:DocumentType').textContent).toBe('ApplicationResponse');
    expect(one(ref, 'cac:ResultOfVerification/cbc:ValidationResultCode').textContent).toBe('02');
    const answer = parse(one(ref, 'cac:Attachment/cac:ExternalReference/cbc:Description').textContent ?? '');
    expect([answer.namespaceURI, answer.localName]).toEqual([NS.ar, 'ApplicationResponse']);
    expect(one(answer, 'cac:DocumentResponse/cac:Response/cbc:ResponseCode').textContent).toBe('02');
    expect(one(answer, 'cac:DocumentResponse/cac:DocumentReference/cbc:ID').textContent).toBe(got.number);
    expect(one(answer, 'cac:DocumentResponse/cac:DocumentReference/cbc:UUID').textContent).toBe(got.cufe);
    expect(one(answer, 'cbc:ID').textContent).toBe(sent.output.authority.track_id);
    expect(one(answer, 'cac:ReceiverParty/cac:PartyTaxScheme/cbc:CompanyID').textContent).toBe('900373115');
    expect(one(answer, 'cac:SenderParty/cac:PartyTaxScheme/cbc:CompanyID').textContent).toBe('800197268');

    // Read again: the same kept bytes.
    expect((await sg.call('invoices.attached_document', { id: inv.id }, owner)).output.content).toBe(r.output.content);
  });

  it('wraps an unsigned credit note the same way, with its CUDE', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    await sg.call('invoices.post', { id: inv.id }, owner);
    const cn = await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 1, reason: 'Devolución' }, owner);
    const note = cn.output.credit_note;
    const sent = await sg.call('invoices.send', { id: note.id }, owner);
    expect(sent.ok, sent.message).toBe(true);
    const r = await sg.call('invoices.attached_document', { id: note.id }, owner);
    expect(r.ok, r.message).toBe(true);
    const root = parse(r.output.content);
    expect(one(root, 'cbc:UUID').textContent).toBe(note.cude);
    expect(one(root, 'cbc:UUID').getAttribute('schemeName')).toBe('CUDE-SHA384');
    const ubl = (await sg.call('invoices.render', { id: note.id, format: 'ubl' }, owner)).output.content;
    expect(one(root, 'cac:Attachment/cac:ExternalReference/cbc:Description').textContent).toBe(ubl);
    expect(parse(ubl).localName).toBe('CreditNote');
  });

  it('after a crash between keeping the container and marking the document accepted, sending again ends the same way', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    await sg.call('invoices.post', { id: inv.id }, owner);
    const first = await sg.call('invoices.send', { id: inv.id }, owner);
    expect(first.ok, first.message).toBe(true);
    const kept = (await sg.call('invoices.attached_document', { id: inv.id }, owner)).output.content;
    // The process died after keeping the AttachedDocument: the invoice still says `submitting`, long ago.
    await sg.db.collection('invoices').updateOne({ _id: inv.id } as never, { $set: { 'authority.status': 'submitting', 'authority.track_id': null, 'authority.submitted_at': new Date(Date.now() - 3_600_000) } });
    expect(await sg.call('invoices.attached_document', { id: inv.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const again = await sg.call('invoices.send', { id: inv.id }, owner);
    expect(again.ok, again.message).toBe(true);
    expect(again.output.authority.track_id).toBe(first.output.authority.track_id); // the authority dedupes by CUFE
    expect(again.output.invoice.authority.status).toBe('accepted');
    expect((await sg.call('invoices.attached_document', { id: inv.id }, owner)).output.content).toBe(kept);
    expect(await sg.db.collection('einvoicing_attached').countDocuments({ _id: inv.id } as never)).toBe(1);
  });

  it('keeps a "]]>" inside the wrapped text exact (split CDATA)', () => {
    const text = 'a]]>b]]]]>c';
    const el = parse(`<x>${cdata(text)}</x>`);
    expect(el.textContent).toBe(text);
  });

  it('refuses an unknown id, a malformed input and a document not accepted; another workspace sees nothing', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    expect(await sg.call('invoices.attached_document', { id: inv.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.attached_document', { id: 'inv_nobody' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('invoices.attached_document', { id: '' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/id' });
    await sg.call('invoices.post', { id: inv.id }, owner);
    expect((await sg.call('invoices.send', { id: inv.id }, owner)).ok).toBe(true);
    expect((await sg.call('invoices.attached_document', { id: inv.id }, owner)).ok).toBe(true);
    expect(await sg.call('invoices.attached_document', { id: inv.id }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
  });
});
