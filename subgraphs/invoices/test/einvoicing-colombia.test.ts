import { createHash, randomBytes } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, localDate, type Principal } from '@cuadra/shared';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { debitNote } from '../src/modules/invoices/tools/debit_note.ts';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMaildir } from '../../../scripts/smtp.ts';
import { deliver } from '../src/modules/invoices/tools/deliver.ts';
import { makeP12, parse, pdfText, run, tempFile, UBL_XSD, xmlsecVerify, xsdCheck, zbar } from './einvoicing-helpers.ts';
import { PIN, configuredWorkspace, draft, draftToday, startInvoices, today } from './setup.ts';
import { EVENT_WAIT_MS } from '../../../test/helpers/until.ts';

const NS = {
  dn: 'urn:oasis:names:specification:ubl:schema:xsd:DebitNote-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
  sts: 'dian:gov:co:facturaelectronica:Structures-2-1',
};

/** The text at a path of `prefix:local` steps (first match each step). */
function at(el: Element, path: string): string | null {
  let cur: Element | undefined = el;
  for (const step of path.split('/')) {
    const [ns, name] = step.split(':') as [keyof typeof NS, string];
    cur = Array.from(cur!.childNodes).find((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === NS[ns] && (n as Element).localName === name);
    if (!cur) return null;
  }
  return cur.textContent;
}

/**
 * DIAN's CUDE written out here, independently of src/e-documents/cufe.ts: SHA-384 of NumDoc, date,
 * time, ValFac, "01", ValIVA, "04", ValINC, "03", ValICA, ValTot, NitOFE, NumAdq, the software PIN
 * and TipoAmbiente, amounts with two decimals and a point.
 */
function handCude(parts: { number: string; date: string; time: string; subtotal: string; vat: string; total: string; pin: string }): string {
  const source = `${parts.number}${parts.date}${parts.time}${parts.subtotal}01${parts.vat}040.00030.00${parts.total}900373115800197268${parts.pin}2`;
  return createHash('sha384').update(source, 'utf8').digest('hex');
}

describe('e-invoicing, Colombia: debit notes', () => {
  let sg: TestSubgraph;
  // Sealing key: the one setup.ts gives the services through the environment, as in production.
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  async function signedWorkspace(): Promise<{ owner: Principal; certPem: string }> {
    const owner = await configuredWorkspace(sg, {
      numbering: {
        invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001' },
        credit_note: { prefix: 'NC', from: 1, to: 1000 }, debit_note: { prefix: 'ND', from: 1, to: 1000 },
      },
    });
    const p12 = makeP12({ password: 'clave' });
    const up = await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password: 'clave' }, owner);
    expect(up.ok, up.message).toBe(true);
    return { owner, certPem: p12.certPem };
  }

  async function postedInvoice(owner: Principal) {
    // Dated today: a signed document goes to DIAN the day it is signed (FAD09e).
    const inv = await draftToday(sg, owner);
    const posted = await sg.call('invoices.post', { id: inv.id }, owner);
    expect(posted.ok, posted.message).toBe(true);
    return posted.output.invoice;
  }

  const charges = [
    { description: 'Intereses de mora, 30 días', quantity: 1, unit_price: 4_500_000 },
    { description: 'Gastos de cobranza', quantity: 2, unit_price: 1_250_050, tax_rate_ppm: 190_000 },
  ];

  it('is numbered, carries its CUDE (recomputed here), references the invoice, is signed (xmlsec1), has its QR code (zbarimg), is accepted by the sandbox and journalled balanced', async () => {
    const { owner, certPem } = await signedWorkspace();
    const invoice = await postedInvoice(owner);
    const r = await sg.call('invoices.debit_note', { invoice_id: invoice.id, concept: 1, reason: 'Pago 30 días tarde', lines: charges }, owner);
    expect(r.ok, r.message).toBe(true);
    checkOutput('invoices.debit_note', debitNote.output, r.output);
    const note = r.output.debit_note;
    // By hand: line 1: 1 × 45,000.00 = 45,000.00, no VAT. Line 2: 2 × 12,500.50 = 25,001.00; VAT 19 % = 4,750.19.
    // Subtotal 45,000.00 + 25,001.00 = 70,001.00; VAT 4,750.19; total 74,751.19; no withholdings, so all of it is due.
    expect(note).toMatchObject({
      kind: 'debit_note', status: 'posted', number: 'ND1', debit_of: invoice.id, credit_of: null, concept: 1,
      subtotal: 7_000_100, tax_total: 475_019, total: 7_475_119, amount_due: 7_475_119, balance: 7_475_119, issue_date: today(), due_date: invoice.due_date,
    });
    expect(note.lines.map((l: any) => [l.subtotal, l.tax])).toEqual([[4_500_000, 0], [2_500_100, 475_019]]);
    expect(note).not.toHaveProperty('cufe');
    expect(note.cude).toBe(handCude({ number: 'ND1', date: today(), time: note.issue_time, subtotal: '70001.00', vat: '4750.19', total: '74751.19', pin: PIN }));
    // The invoice itself is not changed by the note.
    expect(r.output.invoice).toMatchObject({ id: invoice.id, balance: invoice.balance, status: 'posted' });

    const xml = (await sg.call('invoices.render', { id: note.id, format: 'ubl' }, owner)).output.content as string;
    const root = parse(xml);
    expect([root.namespaceURI, root.localName]).toEqual([NS.dn, 'DebitNote']);
    expect(at(root, 'cbc:CustomizationID')).toBe('30');
    expect(at(root, 'cbc:UUID')).toBe(note.cude);
    expect(at(root, 'cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID')).toBe(invoice.number);
    expect(at(root, 'cac:BillingReference/cac:InvoiceDocumentReference/cbc:UUID')).toBe(invoice.cufe);
    expect(at(root, 'cac:DiscrepancyResponse/cbc:ResponseCode')).toBe('1');
    expect(at(root, 'cac:RequestedMonetaryTotal/cbc:PayableAmount')).toBe('74751.19');
    // Only an invoice numbers from a range DIAN authorised: a note carries no sts:InvoiceControl.
    expect(at(root, 'ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:InvoiceControl')).toBeNull();
    const verified = await xmlsecVerify(xml, certPem);
    expect(verified.ok, verified.output).toBe(true);
    expect(verified.output).toMatch(/OK/);
    // One amount changed after signing: xmlsec1 refuses it.
    expect((await xmlsecVerify(xml.replace('<cbc:PriceAmount currencyID="COP">45000.00<', '<cbc:PriceAmount currencyID="COP">45000.01<'), certPem)).ok).toBe(false);

    const qr = await sg.call('einvoicing.qr', { id: note.id }, owner);
    expect(qr.ok, qr.message).toBe(true);
    expect(qr.output.content).toContain(`NumFac: ND1\n`);
    expect(qr.output.content).toContain(`ValTolFac: 74751.19\n`);
    expect(qr.output.content).toContain(note.cude);
    expect(at(root, 'ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:QRCode')).toBe(qr.output.content);
    expect(await zbar(Buffer.from(qr.output.png_base64, 'base64'))).toBe(qr.output.content);

    const sent = await sg.call('invoices.send', { id: note.id }, owner);
    expect(sent.ok, sent.message).toBe(true);
    expect(sent.output.authority).toMatchObject({ is_valid: true, status_code: '00', document_key: note.cude, errors: [] });
    const attached = await sg.call('invoices.attached_document', { id: note.id }, owner);
    expect(attached.ok, attached.message).toBe(true);
    expect(attached.output.content).toContain('Nota Débito');

    // Concept 1 (interest): financial income, not sales. Dr 130505 74,751.19 = Cr 421005 70,001.00 + Cr 240805 4,750.19.
    const entry = await sg.db.collection('journal_entries').findOne({ 'source.id': note.id });
    expect(entry?.source).toEqual({ kind: 'debit_note', id: note.id });
    const lines = (entry!.lines as any[]).map((l) => [l.account, l.debit, l.credit]);
    expect(lines).toEqual([['130505', 7_475_119, 0], ['421005', 0, 7_000_100], ['240805', 0, 475_019]]);
    expect(lines.reduce((s, l) => s + (l[1] as number), 0)).toBe(lines.reduce((s, l) => s + (l[2] as number), 0));

    // It is a receivable of its own: a payment settles it.
    const paid = await sg.call('payments.register', { customer_id: invoice.customer_id, currency: 'COP', amount: 7_475_119, date: today(), invoices: [{ invoice_id: note.id, amount: 7_475_119 }] }, owner);
    expect(paid.ok, paid.message).toBe(true);
    expect((await sg.call('invoices.get', { id: note.id }, owner)).output.invoice).toMatchObject({ status: 'paid', balance: 0 });
  }, 60_000);

  it('the sandbox refuses a debit note with a wrong CUDE or concept, and an unsigned one from a signing issuer', async () => {
    const sandbox = (body: string) => fetch(`${sg.url}/einvoicing/sandbox`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body }).then((res) => res.json() as Promise<any>);
    const noteXml = async (owner: Principal) => {
      const invoice = await postedInvoice(owner);
      const note = (await sg.call('invoices.debit_note', { invoice_id: invoice.id, concept: 2, reason: 'Envío', lines: [charges[0]] }, owner)).output.debit_note;
      return { note, xml: (await sg.call('invoices.render', { id: note.id, format: 'ubl' }, owner)).output.content as string };
    };
    // Unsigned (no certificate): the sandbox's own checks.
    const plain = await noteXml(await configuredWorkspace(sg));
    const wrongKey = await sandbox(plain.xml.replaceAll(plain.note.cude, '0'.repeat(96)));
    expect(wrongKey.is_valid).toBe(false);
    expect(wrongKey.errors).toEqual(['Regla: DAD06, Rechazo: Valor del CUDE no está calculado correctamente']);
    const wrongConcept = await sandbox(plain.xml.replace('<cbc:ResponseCode>2</cbc:ResponseCode>', '<cbc:ResponseCode>7</cbc:ResponseCode>'));
    expect(wrongConcept.errors).toEqual([expect.stringMatching(/^Regla: DAF02, Rechazo: El concepto de la nota débito/)]);
    expect((await sandbox(plain.xml)).is_valid).toBe(true);
    // An issuer that registered a certificate: its signature must be there.
    const signed = await noteXml((await signedWorkspace()).owner);
    const unsigned = await sandbox(signed.xml.replace(/<ext:UBLExtension><ext:ExtensionContent><ds:Signature[\s\S]*<\/ds:Signature><\/ext:ExtensionContent><\/ext:UBLExtension>/, ''));
    expect(unsigned.is_valid).toBe(false);
    expect((await sandbox(signed.xml)).is_valid).toBe(true);
  }, 60_000);

  it('refuses an unknown or draft invoice, a concept of credit notes, a date before the invoice; another workspace sees nothing', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await postedInvoice(owner);
    const draftOnly = await draft(sg, owner);
    const base = { invoice_id: invoice.id, concept: 3, reason: 'Ajuste', lines: [charges[0]] };
    expect(await sg.call('invoices.debit_note', { ...base, invoice_id: 'inv_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('invoices.debit_note', { ...base, invoice_id: draftOnly.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.debit_note', { ...base, concept: 5 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/concept' });
    expect(await sg.call('invoices.debit_note', { ...base, issue_date: '2026-10-01' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await sg.call('invoices.debit_note', { ...base, lines: [] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines' });
    const stranger = testPrincipal();
    expect(await sg.call('invoices.debit_note', base, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace, kind: 'debit_note' })).toBe(0);
    // A set-up made before debit notes existed numbers them from the default range ND1.
    await sg.db.collection('einvoicing_settings').updateOne({ _id: owner.workspace } as never, { $unset: { 'numbering.debit_note': 1 } });
    const first = await sg.call('invoices.debit_note', base, owner);
    expect(first.ok, first.message).toBe(true);
    expect(first.output.debit_note.number).toBe('ND1');
  }, 60_000);

  it('every generated document is valid against the official OASIS UBL 2.1 schemas (xmllint): Invoice, CreditNote, DebitNote, their AttachedDocuments and the ApplicationResponse', async () => {
    // The vendored schemas are the files the README lists, byte for byte.
    const listed = readFileSync(`${UBL_XSD}README.md`, 'utf8').split('\n').filter((l) => /^[0-9a-f]{64}  /.test(l));
    expect(listed).toHaveLength(19);
    for (const line of listed) {
      const [sum, file] = line.split('  ');
      expect(createHash('sha256').update(readFileSync(`${UBL_XSD}${file}`)).digest('hex'), file).toBe(sum);
    }
    const { owner } = await signedWorkspace();
    const invoice = await postedInvoice(owner);
    const credit = await sg.call('invoices.credit_note', { invoice_id: invoice.id, concept: 1, reason: 'Devolución', lines: [{ line: 0, quantity: 1 }] }, owner);
    expect(credit.ok, credit.message).toBe(true);
    const debit = await sg.call('invoices.debit_note', { invoice_id: invoice.id, concept: 4, reason: 'Flete', lines: charges }, owner);
    expect(debit.ok, debit.message).toBe(true);
    const documents: [string, string][] = [[invoice.id, 'Invoice'], [credit.output.credit_note.id, 'CreditNote'], [debit.output.debit_note.id, 'DebitNote']];
    for (const [id, root] of documents) {
      const xml = (await sg.call('invoices.render', { id, format: 'ubl' }, owner)).output.content as string;
      const checked = await xsdCheck(xml, root);
      expect(checked.ok, `${root}: ${checked.output}`).toBe(true);
      expect(checked.output).toMatch(/validates/);
      // The check is real: an element out of UBL's order fails it.
      if (root === 'Invoice') {
        const misplaced = xml.replace(/(<cbc:IssueDate>[^<]+<\/cbc:IssueDate>)(<cbc:IssueTime>[^<]+<\/cbc:IssueTime>)/, '$2$1');
        expect((await xsdCheck(misplaced, root)).output).toMatch(/IssueTime.*not expected|This element is not expected/);
      }
      const sent = await sg.call('invoices.send', { id }, owner);
      expect(sent.ok && sent.output.authority.is_valid, JSON.stringify(sent.output?.authority ?? sent.message)).toBe(true);
      const attached = (await sg.call('invoices.attached_document', { id }, owner)).output.content as string;
      const wrapper = await xsdCheck(attached, 'AttachedDocument');
      expect(wrapper.ok, `AttachedDocument of ${root}: ${wrapper.output}`).toBe(true);
      const response = at(parse(attached), 'cac:ParentDocumentLineReference/cac:DocumentReference/cac:Attachment/cac:ExternalReference/cbc:Description')!;
      const answer = await xsdCheck(response, 'ApplicationResponse');
      expect(answer.ok, `ApplicationResponse: ${answer.output}`).toBe(true);
    }
  }, 90_000);

  /** The newest message the real SMTP server (exim4) delivered to `to`, waiting for it (up to EVENT_WAIT_MS). */
  async function mailTo(to: string): Promise<string> {
    for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline;) {
      const raw = readMaildir(process.env.CUADRA_MAILDIR!).map((m) => m.raw).reverse().find((m) => new RegExp(`^Envelope-to: ${to.replace(/[.+]/g, '\\$&')}$`, 'mi').test(m));
      if (raw) return raw;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`nothing reached ${to}`);
  }

  /** The message's attachments, taken apart by Python's standard e-mail parser (not ours): a folder with them. */
  async function attachmentsOf(raw: string): Promise<{ dir: string; subject: string; messageId: string; files: string[] }> {
    const dir = mkdtempSync(join(tmpdir(), 'einv-mail-'));
    const script = [
      'import email, email.policy, os, sys, json',
      'm = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.default)',
      'out = []',
      'for part in m.iter_attachments():',
      '    name = part.get_filename(); open(os.path.join(sys.argv[2], name), "wb").write(part.get_payload(decode=True)); out.append(name)',
      'print(json.dumps({"subject": str(m["subject"]), "id": str(m["message-id"]), "files": out}))',
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script, tempFile('mail.eml', raw), dir]);
    const parsed = JSON.parse(stdout) as { subject: string; id: string; files: string[] };
    return { dir, subject: parsed.subject, messageId: parsed.id, files: parsed.files };
  }

  it('delivers the AttachedDocument and the PDF to the buyer by e-mail (read from the real SMTP server, unzipped, pdftotext), tracked; a refused recipient is a bounce, and sending again works', async () => {
    const { owner } = await signedWorkspace();
    // The buyer has no e-mail in crm: an owner signed in names the address (issue 31: an API key may not).
    const person: Principal = { ...owner, actor: { type: 'member', id: 'mem_owner' } };
    const invoice = await postedInvoice(owner);
    // Not yet accepted by the authority: nothing to deliver.
    expect(await sg.call('invoices.deliver', { id: invoice.id, to: 'compras@example.co' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('invoices.send', { id: invoice.id }, owner)).ok).toBe(true);

    const bounce = await sg.call('invoices.deliver', { id: invoice.id, to: 'facturas@buzon.invalid' }, person);
    expect(bounce.ok, bounce.message).toBe(true);
    expect(bounce.output.delivery).toMatchObject({ status: 'bounced', to: 'facturas@buzon.invalid', attempts: 1 });
    expect(bounce.output.delivery.error).toMatch(/550|no mailbox/);

    const to = `recepcion.${randomBytes(4).toString('hex')}@andina.example.co`;
    const r = await sg.call('invoices.deliver', { id: invoice.id, to }, person);
    expect(r.ok, r.message).toBe(true);
    checkOutput('invoices.deliver', deliver.output, r.output);
    expect(r.output.delivery).toMatchObject({ status: 'sent', to, error: null, attempts: 2 });
    expect(r.output.invoice.delivery).toEqual(r.output.delivery);
    const stored = await sg.call('invoices.get', { id: invoice.id }, owner);
    expect(stored.output.invoice.delivery).toMatchObject({ status: 'sent', message_id: r.output.delivery.message_id });
    // Sent once: a second call is refused, nothing sent again.
    expect(await sg.call('invoices.deliver', { id: invoice.id, to }, person)).toMatchObject({ ok: false, code: 'conflict' });

    const mail = await attachmentsOf(await mailTo(to));
    expect(mail.messageId).toBe(r.output.delivery.message_id);
    expect(mail.subject).toBe(`900373115;Cuadra Demo SAS;${invoice.number};01;Cuadra Demo SAS`);
    expect(mail.files).toEqual([`z${invoice.number}.zip`]);
    await run('unzip', ['-q', join(mail.dir, mail.files[0]), '-d', mail.dir]);
    expect(readdirSync(mail.dir).sort()).toEqual([`${invoice.number}.pdf`, `ad${invoice.number}.xml`, `z${invoice.number}.zip`].sort());
    const xml = readFileSync(join(mail.dir, `ad${invoice.number}.xml`), 'utf8');
    expect(xml).toBe((await sg.call('invoices.attached_document', { id: invoice.id }, owner)).output.content);
    expect((await xsdCheck(xml, 'AttachedDocument')).ok).toBe(true);
    const text = await pdfText(readFileSync(join(mail.dir, `${invoice.number}.pdf`)));
    expect(text.replace(/\s+/g, '')).toContain(invoice.cufe);
    // 2 × 150,000.00 = 300,000.00; VAT 19 % = 57,000.00; total 357,000.00.
    expect(text).toMatch(/COP 357\.000,00/);

    // Sealed: to another workspace (one without e-invoicing set up, whose own refusal would be conflict) the invoice is absent, and nothing is sent.
    const messagesTo = () => readMaildir(process.env.CUADRA_MAILDIR!).filter((m) => new RegExp(`^Envelope-to: ${to.replace(/[.+]/g, '\\$&')}$`, 'mi').test(m.raw)).length;
    const sent = messagesTo();
    expect(await sg.call('invoices.deliver', { id: invoice.id, to }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('invoices.deliver', { id: 'inv_doesnotexist0000', to }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    await new Promise((res) => setTimeout(res, 300));
    expect(messagesTo()).toBe(sent);
    expect(await sg.call('invoices.deliver', { id: invoice.id, to: 'no es un correo' }, person)).toMatchObject({ ok: false, code: 'invalid_input', field: '/to' });
  }, 90_000);

  it('the tax lane warns 30 days ahead of the certificate\'s and the resolution\'s end, and when 10 % or less of a range is left (hand-checked)', async () => {
    const today = localDate(new Date());
    const owner = await configuredWorkspace(sg, {
      numbering: { invoice: { prefix: 'SETT', from: 1, to: 10, resolution: '18760000099', valid_to: addDays(today, 40) }, credit_note: { prefix: 'NC', from: 1, to: 1000 } },
    });
    const lane = async (window: Record<string, unknown>, who: Principal = owner) => {
      const r = await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "tax", window: $w) }', { w: window }, who);
      expect(r.body.errors).toBeUndefined();
      // The lane also carries the national tax calendar (the tax module's entries, kind `tax`); these are e-invoicing's warnings.
      return (r.body.data.invoicesAgenda as any[]).filter((e) => e.kind === 'compliance');
    };
    const month = { from: today, to: addDays(today, 30), limit: 100, overdue: true };
    // Nothing to warn of yet: the resolution ends in 40 days (warned from day 10), 10 of 10 numbers left, no certificate.
    expect(await lane(month)).toEqual([
      expect.objectContaining({ date: addDays(today, 10), kind: 'compliance', source: 'tax', status: 'open', ref: expect.objectContaining({ kind: 'numbering_resolution', range: 'invoice', days_left: 40 }) }),
    ]);
    // A certificate that lapses in 20 days: inside the 30-day warning, so dated today.
    const up = await sg.call('einvoicing.upload_certificate', { p12_base64: makeP12({ password: 'k', to: new Date(Date.now() + 20 * 86_400_000) }).base64, password: 'k' }, owner);
    expect(up.ok, up.message).toBe(true);
    // 8 invoices: SETT1..SETT8; next is 9, so 10 − 9 + 1 = 2 left of 10 = 20 % > 10 %: no warning.
    for (let i = 0; i < 8; i++) expect((await sg.call('invoices.post', { id: (await draft(sg, owner)).id }, owner)).ok).toBe(true);
    let entries = await lane(month);
    expect(entries.map((e) => [e.date, e.ref.kind])).toEqual([[today, 'certificate'], [addDays(today, 10), 'numbering_resolution']]);
    expect(entries[0]).toMatchObject({ status: 'open', ref: { days_left: 20, expires_on: addDays(today, 20) } });
    expect(entries[0].title).toMatch(/vence el .* \(en 20 días\)/);
    // The 9th: next is 10, 1 left of 10 = 10 %: warned, dated today.
    expect((await sg.call('invoices.post', { id: (await draft(sg, owner)).id }, owner)).output.invoice.number).toBe('SETT9');
    entries = await lane(month);
    expect(entries.map((e) => [e.date, e.ref.kind])).toEqual([[today, 'certificate'], [today, 'numbering_exhaustion'], [addDays(today, 10), 'numbering_resolution']]);
    expect(entries[1]).toMatchObject({ status: 'open', title: 'Numeración de facturas SETT1–SETT10: quedan 1 de 10 números', ref: { range: 'invoice', left: 1, total: 10, next_number: 'SETT10' } });
    // A window that starts after the warnings, without overdue ones: nothing.
    expect(await lane({ from: addDays(today, 11), to: addDays(today, 40), limit: 100, overdue: false })).toEqual([]);
    // A certificate that lapsed 5 days ago is overdue, dated its last day.
    await sg.db.collection('einvoicing_certificates').updateOne({ _id: owner.workspace } as never, { $set: { not_after: new Date(Date.now() - 5 * 86_400_000) } });
    expect((await lane(month))[0]).toMatchObject({ date: addDays(today, -5), status: 'overdue', ref: { kind: 'certificate' } });
    // Sealed: another workspace's lane is empty.
    expect(await lane(month, testPrincipal())).toEqual([]);
  }, 90_000);
});
