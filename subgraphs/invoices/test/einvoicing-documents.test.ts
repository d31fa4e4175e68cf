import type { Element } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, type Principal } from '@cuadra/shared';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { validateDocument } from '../src/e-documents/sandbox.ts';
import { openSettings } from '../src/lib/settings.ts';
import { makeP12, parse, xmlsecVerify, xsdCheck } from './einvoicing-helpers.ts';
import { andina, configuredWorkspace, draftToday, startInvoices, today } from './setup.ts';

// Issue 30, items 1, 2, 3 and 6: every DIAN document kind, built from one line model, valid
// against the OASIS UBL 2.1 schemas (xmllint), signed (xmlsec1), with what Anexo Técnico 1.9
// requires of its parties and payment, and refused by the built-in sandbox as DIAN refuses.

const NS = {
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
  sts: 'dian:gov:co:facturaelectronica:Structures-2-1',
};

/** The child elements of `el` along a path of `prefix:local` steps (every match of the last step). */
function all(el: Element, path: string): Element[] {
  let level: Element[] = [el];
  for (const step of path.split('/')) {
    const [ns, name] = step.split(':') as [keyof typeof NS, string];
    level = level.flatMap((e) => Array.from(e.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === NS[ns] && (n as Element).localName === name));
  }
  return level;
}

/** The text at a path, or null. */
function at(el: Element, path: string): string | null {
  return all(el, path)[0]?.textContent ?? null;
}

/**
 * The rich invoice of these tests, worked out by hand (cents):
 *   line 1: 3 × 10,000.50 = 30,001.50 gross; discount 10 % = 3,000.15; charge "Embalaje" 2.5 % =
 *           750.0375 → 750.04; net 30,001.50 − 3,000.15 + 750.04 = 27,751.39; IVA 19 % = 5,272.7641 → 5,272.76
 *   line 2: 2 × 150,000.00 = 300,000.00; IVA 19 % = 57,000.00
 *   lines: 27,751.39 + 300,000.00 = 327,751.39; IVA 5,272.76 + 57,000.00 = 62,272.76
 *   document: allowance "Descuento comercial" 2 % of 327,751.39 = 6,555.0278 → 6,555.03; charge "Flete" 50,000.00
 *   payable: 327,751.39 + 62,272.76 − 6,555.03 + 50,000.00 = 433,469.12
 *   withholdings: retefuente 4 % per line: 1,110.0556 → 1,110.06 + 12,000.00 = 13,110.06;
 *                 ReteIVA 15 % of each line's IVA: 790.914 → 790.91 + 8,550.00 = 9,340.91
 *   due: 433,469.12 − 13,110.06 − 9,340.91 = 411,018.15
 */
const RICH = {
  lines: [
    { description: 'Cajas de cartón', quantity: 3, unit_price: 1_000_050, discount_bps: 1000, charges: [{ reason: 'Embalaje', rate_bps: 250 }], tax_rate_ppm: 190000 },
    { description: 'Consultoría', quantity: 2, unit_price: 15_000_000, tax_rate_ppm: 190000 },
  ],
  allowance_charges: [{ charge: false, reason: 'Descuento comercial', rate_bps: 200 }, { charge: true, reason: 'Flete', amount: 5_000_000 }],
  withholdings: [{ type: 'retefuente', rate_ppm: 40000 }, { type: 'reteiva', rate_ppm: 150000 }],
};

describe('DIAN documents from one line model (issue 30, items 1, 2, 3, 6)', () => {
  let sg: TestSubgraph;
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  async function signedWorkspace(): Promise<{ owner: Principal; certPem: string }> {
    const owner = await configuredWorkspace(sg, {
      numbering: {
        invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001', valid_from: '2026-01-01', valid_to: '2027-12-31' },
        credit_note: { prefix: 'NC', from: 1, to: 1000 }, debit_note: { prefix: 'ND', from: 1, to: 1000 },
      },
    });
    const p12 = makeP12({ password: 'clave' });
    const up = await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password: 'clave' }, owner);
    expect(up.ok, up.message).toBe(true);
    return { owner, certPem: p12.certPem };
  }

  async function posted(owner: Principal, input: Record<string, unknown> = {}) {
    const inv = await draftToday(sg, owner, input);
    const p = await sg.call('invoices.post', { id: inv.id }, owner);
    expect(p.ok, p.message).toBe(true);
    return p.output.invoice;
  }

  const ubl = async (owner: Principal, id: string) => (await sg.call('invoices.render', { id, format: 'ubl' }, owner)).output.content as string;

  it('item 1: a credit note of an invoice with withholdings is valid against the UBL 2.1 CreditNote schema — it carries no cac:WithholdingTaxTotal, which only Invoice has', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await posted(owner, { withholdings: [{ type: 'retefuente', rate_ppm: 40000 }, { type: 'reteica', rate_ppm: 9660 }] });
    const invoiceXml = await ubl(owner, invoice.id);
    expect(all(parse(invoiceXml), 'cac:WithholdingTaxTotal')).toHaveLength(2);
    expect((await xsdCheck(invoiceXml, 'Invoice')).ok).toBe(true);
    const cn = await sg.call('invoices.credit_note', { invoice_id: invoice.id, concept: 1, reason: 'Devolución', lines: [{ line: 0, quantity: 1 }] }, owner);
    expect(cn.ok, cn.message).toBe(true);
    // The note keeps its withholdings in the books (2 × … → 1 × 150,000.00: retefuente 4 % = 6,000.00; ReteICA 0.966 % = 1,449.00).
    expect(cn.output.credit_note.withholdings.map((w: any) => [w.type, w.amount])).toEqual([['retefuente', 600_000], ['reteica', 144_900]]);
    const xml = await ubl(owner, cn.output.credit_note.id);
    const checked = await xsdCheck(xml, 'CreditNote');
    expect(checked.ok, checked.output).toBe(true);
    expect(all(parse(xml), 'cac:WithholdingTaxTotal')).toHaveLength(0);
    expect((await sg.call('invoices.send', { id: cn.output.credit_note.id }, owner)).output.authority).toMatchObject({ is_valid: true, errors: [] });
  });

  it('item 2: a line\'s discount and charge are its cac:AllowanceCharge (line = quantity × price − allowances + charges), the document\'s own too; amounts by hand, accepted by the sandbox, and journalled', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await posted(owner, RICH);
    expect(invoice.lines[0]).toMatchObject({
      gross: 3_000_150, subtotal: 2_775_139, tax: 527_276,
      allowance_charges: [
        { charge: false, reason: 'Descuento', reason_code: '95', rate_bps: 1000, base: 3_000_150, amount: 300_015 },
        { charge: true, reason: 'Embalaje', reason_code: null, rate_bps: 250, base: 3_000_150, amount: 75_004 },
      ],
    });
    expect(invoice).toMatchObject({
      subtotal: 32_775_139, tax_total: 6_227_276, allowance_total: 655_503, charge_total: 5_000_000, total: 43_346_912,
      withholding_total: 1_311_006 + 934_091, amount_due: 41_101_815,
    });
    expect(invoice.allowance_charges).toEqual([
      { charge: false, reason: 'Descuento comercial', reason_code: null, rate_bps: 200, base: 32_775_139, amount: 655_503, tax_rate_ppm: 0, tax: 0 },
      { charge: true, reason: 'Flete', reason_code: null, rate_bps: null, base: 5_000_000, amount: 5_000_000, tax_rate_ppm: 0, tax: 0 },
    ]);
    const root = parse(await ubl(owner, invoice.id));
    const line = all(root, 'cac:InvoiceLine')[0];
    expect(at(line, 'cbc:LineExtensionAmount')).toBe('27751.39');
    const acs = all(line, 'cac:AllowanceCharge').map((a) => [at(a, 'cbc:ID'), at(a, 'cbc:ChargeIndicator'), at(a, 'cbc:AllowanceChargeReason'), at(a, 'cbc:MultiplierFactorNumeric'), at(a, 'cbc:Amount'), at(a, 'cbc:BaseAmount')]);
    expect(acs).toEqual([['1', 'false', 'Descuento', '10.00', '3000.15', '30001.50'], ['2', 'true', 'Embalaje', '2.50', '750.04', '30001.50']]);
    expect(all(root, 'cac:AllowanceCharge').map((a) => [at(a, 'cbc:ChargeIndicator'), at(a, 'cbc:AllowanceChargeReasonCode'), at(a, 'cbc:MultiplierFactorNumeric'), at(a, 'cbc:Amount'), at(a, 'cbc:BaseAmount')]))
      .toEqual([['false', '00', '2.00', '6555.03', '327751.39'], ['true', null, '100.00', '50000.00', '50000.00']]);
    const totals = ['LineExtensionAmount', 'TaxExclusiveAmount', 'TaxInclusiveAmount', 'AllowanceTotalAmount', 'ChargeTotalAmount', 'PayableAmount'].map((t) => at(root, `cac:LegalMonetaryTotal/cbc:${t}`));
    expect(totals).toEqual(['327751.39', '327751.39', '390024.15', '6555.03', '50000.00', '433469.12']);
    const sent = await sg.call('invoices.send', { id: invoice.id }, owner);
    expect(sent.output.authority, JSON.stringify(sent.output?.authority)).toMatchObject({ is_valid: true, errors: [] });
    // Dr 130505 411,018.15 + 135515 13,110.06 + 135517 9,340.91 + 417505 6,555.03 = Cr 413595 (327,751.39 + 50,000.00) + 240805 62,272.76 = 440,024.15.
    const entry = await sg.db.collection('journal_entries').findOne({ 'source.id': invoice.id });
    const by = (code: string) => (entry!.lines as any[]).filter((l) => l.account === code).reduce((s, l) => s + l.debit - l.credit, 0);
    expect([by('130505'), by('417505'), by('413595'), by('240805')]).toEqual([41_101_815, 655_503, -37_775_139, -6_227_276]);
    const debits = (entry!.lines as any[]).reduce((s, l) => s + l.debit, 0);
    expect(debits).toBe((entry!.lines as any[]).reduce((s, l) => s + l.credit, 0));
    expect(debits).toBe(44_002_415);
  });

  it('item 2: a full credit note takes back the document\'s allowances and charges, leaving nothing owed, and its journal mirrors the invoice\'s', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await posted(owner, RICH);
    const cn = await sg.call('invoices.credit_note', { invoice_id: invoice.id, concept: 2, reason: 'Anulación' }, owner);
    expect(cn.ok, cn.message).toBe(true);
    expect(cn.output.credit_note).toMatchObject({ total: 43_346_912, allowance_total: 655_503, charge_total: 5_000_000, amount_due: 41_101_815 });
    expect(cn.output.invoice).toMatchObject({ status: 'cancelled', balance: 0 });
    const noteEntry = await sg.db.collection('journal_entries').findOne({ 'source.id': cn.output.credit_note.id });
    const net = (code: string) => (noteEntry!.lines as any[]).filter((l) => l.account === code).reduce((s, l) => s + l.debit - l.credit, 0);
    // Dr 417505 (327,751.39 + 50,000.00 − 6,555.03) + Dr 240805 62,272.76 = Cr 130505 411,018.15 + Cr withholdings 22,450.97.
    expect([net('417505'), net('240805'), net('130505')]).toEqual([37_119_636, 6_227_276, -41_101_815]);
    const xml = await ubl(owner, cn.output.credit_note.id);
    expect((await xsdCheck(xml, 'CreditNote')).ok).toBe(true);
    expect(at(parse(xml), 'cac:LegalMonetaryTotal/cbc:PayableAmount')).toBe('433469.12');
  });

  it('every document kind — Invoice, CreditNote, DebitNote, each AttachedDocument and the ApplicationResponse — with and without withholdings, discounts and charges, is valid against the OASIS UBL 2.1 schemas, signed (xmlsec1) and accepted by the sandbox', async () => {
    const { owner, certPem } = await signedWorkspace();
    const plain = await posted(owner);
    const rich = await posted(owner, RICH);
    const fullCredit = await sg.call('invoices.credit_note', { invoice_id: plain.id, concept: 2, reason: 'Anulación' }, owner);
    const partialCredit = await sg.call('invoices.credit_note', { invoice_id: rich.id, concept: 1, reason: 'Devolución', lines: [{ line: 0, quantity: 1 }] }, owner);
    const plainDebit = await sg.call('invoices.debit_note', { invoice_id: rich.id, concept: 1, reason: 'Intereses', lines: [{ description: 'Intereses de mora', quantity: 1, unit_price: 450_000 }] }, owner);
    const richDebit = await sg.call('invoices.debit_note', {
      invoice_id: rich.id, concept: 2, reason: 'Gastos',
      lines: [{ description: 'Transporte adicional', quantity: 2, unit_price: 1_250_050, discount_bps: 500, charges: [{ reason: 'Seguro', rate_bps: 100 }], tax_rate_ppm: 190000 }],
    }, owner);
    for (const r of [fullCredit, partialCredit, plainDebit, richDebit]) expect(r.ok, r.message).toBe(true);
    const documents: [string, string][] = [
      [plain.id, 'Invoice'], [rich.id, 'Invoice'], [fullCredit.output.credit_note.id, 'CreditNote'], [partialCredit.output.credit_note.id, 'CreditNote'],
      [plainDebit.output.debit_note.id, 'DebitNote'], [richDebit.output.debit_note.id, 'DebitNote'],
    ];
    for (const [id, root] of documents) {
      const xml = await ubl(owner, id);
      const checked = await xsdCheck(xml, root);
      expect(checked.ok, `${root} ${id}: ${checked.output}`).toBe(true);
      const verified = await xmlsecVerify(xml, certPem);
      expect(verified.ok, `${root} ${id}: ${verified.output}`).toBe(true);
      const sent = await sg.call('invoices.send', { id }, owner);
      expect(sent.output?.authority, `${root} ${id}: ${JSON.stringify(sent.output?.authority ?? sent.message)}`).toMatchObject({ is_valid: true, errors: [] });
      const attached = (await sg.call('invoices.attached_document', { id }, owner)).output.content as string;
      const wrapper = await xsdCheck(attached, 'AttachedDocument');
      expect(wrapper.ok, `AttachedDocument of ${root}: ${wrapper.output}`).toBe(true);
      expect((await xmlsecVerify(attached, certPem)).ok).toBe(true);
      const inner = at(parse(attached), 'cac:Attachment/cac:ExternalReference/cbc:Description')!;
      expect(inner).toBe(xml);
      const answer = all(parse(attached), 'cac:ParentDocumentLineReference/cac:DocumentReference/cac:Attachment/cac:ExternalReference/cbc:Description')[0].textContent!;
      expect((await xsdCheck(answer, 'ApplicationResponse')).ok).toBe(true);
    }
    // The rich debit note's line, by hand: 2 × 12,500.50 = 25,001.00; −5 % = 1,250.05; +1 % = 250.01; net 24,000.96; IVA 19 % = 4,560.1824 → 4,560.18.
    expect(richDebit.output.debit_note.lines[0]).toMatchObject({ gross: 2_500_100, subtotal: 2_400_096, tax: 456_018 });
    // The DebitNote's line allowances follow its TaxTotal (UBL 2.1's DebitNoteLine order), the Invoice's precede it.
    const dnLine = all(parse(await ubl(owner, richDebit.output.debit_note.id)), 'cac:DebitNoteLine')[0];
    expect(Array.from(dnLine.childNodes).filter((n) => n.nodeType === 1).map((n) => (n as Element).localName)).toEqual(['ID', 'DebitedQuantity', 'LineExtensionAmount', 'TaxTotal', 'AllowanceCharge', 'AllowanceCharge', 'Item', 'Price']);
  }, 120_000);

  it('item 6: the AttachedDocument is signed by the issuer (XAdES-EPES, DIAN\'s policy) in its ext:UBLExtension; xmlsec1 verifies it, and refuses it with one byte changed', async () => {
    const { owner, certPem } = await signedWorkspace();
    const invoice = await posted(owner);
    expect((await sg.call('invoices.send', { id: invoice.id }, owner)).output.authority.is_valid).toBe(true);
    const attached = (await sg.call('invoices.attached_document', { id: invoice.id }, owner)).output.content as string;
    expect(attached).toMatch(/^<\?xml[^>]*\?><AttachedDocument [^>]*><ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent><ds:Signature /);
    expect(attached).toContain('<xades:Identifier>https://facturaelectronica.dian.gov.co/politicadefirma/v2/politicadefirmav2.pdf</xades:Identifier>');
    const verified = await xmlsecVerify(attached, certPem);
    expect(verified.ok, verified.output).toBe(true);
    expect(verified.output).toMatch(/OK/);
    const tampered = attached.replace('<cbc:ParentDocumentID>', '<cbc:ParentDocumentID>X');
    expect((await xmlsecVerify(tampered, certPem)).ok).toBe(false);
    expect((await xsdCheck(attached, 'AttachedDocument')).ok).toBe(true);
  });

  it('item 3: the document names the parties and the payment as Anexo Técnico 1.9 requires: PaymentMeans, TaxLevelCode, PartyLegalEntity, DANE-coded addresses, contact, the authorisation period', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await posted(owner);
    const root = parse(await ubl(owner, invoice.id));
    expect([at(root, 'cac:PaymentMeans/cbc:ID'), at(root, 'cac:PaymentMeans/cbc:PaymentMeansCode'), at(root, 'cac:PaymentMeans/cbc:PaymentDueDate')]).toEqual(['2', '47', addDays(today(), 30)]);
    const supplier = all(root, 'cac:AccountingSupplierParty')[0];
    expect(at(supplier, 'cbc:AdditionalAccountID')).toBe('1');
    expect(['cbc:ID', 'cbc:CityName', 'cbc:PostalZone', 'cbc:CountrySubentity', 'cbc:CountrySubentityCode', 'cac:AddressLine/cbc:Line', 'cac:Country/cbc:IdentificationCode'].map((p) => at(supplier, `cac:Party/cac:PhysicalLocation/cac:Address/${p}`)))
      .toEqual(['11001', 'Bogotá, D.c.', '110221', 'Bogotá', '11', 'Calle 93 # 11-28 Oficina 502', 'CO']);
    expect([at(supplier, 'cac:Party/cac:PartyTaxScheme/cbc:RegistrationName'), at(supplier, 'cac:Party/cac:PartyTaxScheme/cbc:TaxLevelCode'), at(supplier, 'cac:Party/cac:PartyTaxScheme/cac:TaxScheme/cbc:ID')])
      .toEqual(['CUADRA DEMO S.A.S.', 'O-15', '01']);
    const company = all(supplier, 'cac:Party/cac:PartyLegalEntity/cbc:CompanyID')[0];
    expect([company.textContent, company.getAttribute('schemeID'), company.getAttribute('schemeName')]).toEqual(['900373115', '3', '31']);
    expect(at(supplier, 'cac:Party/cac:PartyLegalEntity/cac:CorporateRegistrationScheme/cbc:ID')).toBe('SETP');
    expect([at(supplier, 'cac:Party/cac:Contact/cbc:Telephone'), at(supplier, 'cac:Party/cac:Contact/cbc:ElectronicMail')]).toEqual(['6017434000', 'facturacion@cuadra.example.co']);
    const customer = all(root, 'cac:AccountingCustomerParty')[0];
    expect([at(customer, 'cac:Party/cac:PhysicalLocation/cac:Address/cbc:ID'), at(customer, 'cac:Party/cac:PhysicalLocation/cac:Address/cbc:CountrySubentityCode'), at(customer, 'cac:Party/cac:PartyTaxScheme/cbc:TaxLevelCode'), at(customer, 'cac:Party/cac:PartyLegalEntity/cbc:RegistrationName'), at(customer, 'cac:Party/cac:Contact/cbc:ElectronicMail')])
      .toEqual(['05001', '05', 'O-13;O-23', 'TIENDA ANDINA S.A.S.', 'facturas@andina.example.co']);
    const control = 'ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions';
    expect([at(root, `${control}/sts:InvoiceControl/sts:AuthorizationPeriod/cbc:StartDate`), at(root, `${control}/sts:AuthorizationProvider/sts:AuthorizationProviderID`), at(root, `${control}/sts:SoftwareProvider/sts:ProviderID`)])
      .toEqual(['2026-01-01', '800197268', '901234567']);
    // A set-up without the issuer's fiscal address sends nothing: DIAN refuses a document without it (FAJ07).
    const bare = await configuredWorkspace(sg, { issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS' } });
    const unsendable = await posted(bare);
    const refused = await sg.call('invoices.send', { id: unsendable.id }, bare);
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.message).toMatch(/fiscal address/);
    expect((await sg.db.collection('invoices').findOne({ _id: unsendable.id } as never))?.authority ?? null).toBeNull();
  });

  it('item 3, FAD09e: a signed document dated another day than it was signed is refused by the sandbox (DIAN: the issue date is the signing date)', async () => {
    const { owner } = await signedWorkspace();
    const yesterday = await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', issue_date: addDays(today(), -1), due_date: addDays(today(), 29), lines: RICH.lines }, owner);
    expect((await sg.call('invoices.post', { id: yesterday.output.invoice.id }, owner)).ok).toBe(true);
    const sent = await sg.call('invoices.send', { id: yesterday.output.invoice.id }, owner);
    expect(sent.output.authority.is_valid).toBe(false);
    expect(sent.output.authority.errors).toEqual(['Regla: FAD09e, Rechazo: La fecha de generación de la factura es diferente a la fecha de firma de la factura']);
  });

  // The same rule of the notes' tables (sandbox.ts: one check for the three kinds, worded with the note's abbreviation).
  for (const [rule, tool, note, abbreviation] of [['CAD09e', 'invoices.credit_note', 'credit_note', 'NC'], ['DAD09e', 'invoices.debit_note', 'debit_note', 'ND']] as const) {
    it(`item 3, ${rule}: a signed ${note.replace('_', ' ')} dated another day than it was signed is refused by the sandbox`, async () => {
      const { owner } = await signedWorkspace();
      const invoice = await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', issue_date: addDays(today(), -1), due_date: addDays(today(), 29), lines: RICH.lines }, owner);
      expect((await sg.call('invoices.post', { id: invoice.output.invoice.id }, owner)).ok).toBe(true);
      const lines = note === 'credit_note' ? [{ line: 1, quantity: 1 }] : [{ description: 'Intereses', quantity: 1, unit_price: 100_000 }];
      const made = await sg.call(tool, { invoice_id: invoice.output.invoice.id, concept: 1, reason: 'Ajuste', issue_date: addDays(today(), -1), lines }, owner);
      expect(made.ok, made.message).toBe(true);
      const sent = await sg.call('invoices.send', { id: made.output[note].id }, owner);
      expect(sent.output?.authority, sent.message).toMatchObject({ is_valid: false });
      expect(sent.output.authority.errors).toEqual([`Regla: ${rule}, Rechazo: La fecha de generación de la ${abbreviation} es diferente a la fecha de firma de la ${abbreviation}`]);
    });
  }
});

/** Replaces `from` inside the first `<tag>…</tag>` of `xml` (exactly once: a test that changes nothing proves nothing). */
function inside(xml: string, tag: string, from: string | RegExp, to: string): string {
  const start = xml.indexOf(`<${tag}>`);
  const end = xml.indexOf(`</${tag}>`, start) + tag.length + 3;
  expect(start, tag).toBeGreaterThanOrEqual(0);
  const part = xml.slice(start, end);
  const changed = part.replace(from, to);
  expect(changed, `${tag}: ${String(from)}`).not.toBe(part);
  return xml.slice(0, start) + changed + xml.slice(end);
}

/** Replaces `from` in the whole document, once, insisting it was there. */
function swap(xml: string, from: string | RegExp, to: string): string {
  const changed = xml.replace(from, to);
  expect(changed, String(from)).not.toBe(xml);
  return changed;
}

describe('the built-in sandbox refuses what DIAN\'s habilitación refuses: one test per rule of Anexo Técnico 1.9', () => {
  let sg: TestSubgraph;
  const base: Record<'invoice' | 'credit' | 'debit', { xml: string; lookup: () => Promise<never> }> = {} as never;

  beforeAll(async () => {
    sg = await startInvoices();
    const owner = await configuredWorkspace(sg, {
      numbering: {
        invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001', valid_from: '2026-01-01', valid_to: '2027-12-31' },
        credit_note: { prefix: 'NC', from: 1, to: 1000 }, debit_note: { prefix: 'ND', from: 1, to: 1000 },
      },
    });
    const inv = await draftToday(sg, owner, RICH);
    expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
    const credit = (await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 1, reason: 'Devolución', lines: [{ line: 1, quantity: 1 }] }, owner)).output.credit_note;
    const debit = (await sg.call('invoices.debit_note', { invoice_id: inv.id, concept: 1, reason: 'Intereses', lines: [{ description: 'Intereses', quantity: 1, unit_price: 100_000 }] }, owner)).output.debit_note;
    const s = await sg.db.collection('einvoicing_settings').findOne({ _id: owner.workspace } as never);
    const lookup = async () => openSettings(s as never) as never;
    for (const [k, id] of [['invoice', inv.id], ['credit', credit.id], ['debit', debit.id]] as const) {
      base[k] = { xml: (await sg.call('invoices.render', { id, format: 'ubl' }, owner)).output.content, lookup };
    }
  });
  afterAll(async () => {
    await sg?.close();
  });

  it('accepts the documents as rendered (nothing to refuse in them), over HTTP too', async () => {
    for (const k of ['invoice', 'credit', 'debit'] as const) expect((await validateDocument(base[k].xml, base[k].lookup)).errors, k).toEqual([]);
    const answer = await fetch(`${sg.url}/einvoicing/sandbox`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: base.invoice.xml }).then((r) => r.json() as Promise<any>);
    expect(answer).toMatchObject({ is_valid: true, errors: [] });
  });

  const S = 'cac:AccountingSupplierParty';
  const C = 'cac:AccountingCustomerParty';
  const rules: [string, 'invoice' | 'credit' | 'debit', (xml: string) => string][] = [
    ['FAD01', 'invoice', (x) => swap(x, '<cbc:UBLVersionID>UBL 2.1<', '<cbc:UBLVersionID>UBL 2.0<')],
    ['FAD02', 'invoice', (x) => swap(x, '<cbc:CustomizationID>10<', '<cbc:CustomizationID>99<')],
    ['FAD05a', 'invoice', (x) => swap(x, /<cbc:ID>SETP(\d+)<\/cbc:ID>/, '<cbc:ID>SETP-$1</cbc:ID>')],
    ['FAD05d', 'invoice', (x) => swap(x, /<cbc:ID>SETP\d+<\/cbc:ID>/, '<cbc:ID>SETP1</cbc:ID>')],
    ['FAD06', 'invoice', (x) => swap(x, /(<cbc:UUID schemeID="2" schemeName="CUFE-SHA384">)[0-9a-f]{96}/, `$1${'0'.repeat(96)}`)],
    ['FAD09a', 'invoice', (x) => swap(x, /<cbc:IssueDate>[^<]+</, '<cbc:IssueDate>2025-12-31<')],
    ['FAD10', 'invoice', (x) => swap(x, /<cbc:IssueTime>(\d\d:\d\d:\d\d)-05:00</, '<cbc:IssueTime>$1<')],
    ['FAD04', 'invoice', (x) => swap(x, '<cbc:ProfileExecutionID>2</cbc:ProfileExecutionID>', '')],
    ['FAD05', 'invoice', (x) => swap(x, /<cbc:ID>SETP\d+<\/cbc:ID>/, '<cbc:ID></cbc:ID>')],
    ['FAD09', 'invoice', (x) => swap(x, /<cbc:IssueDate>(\d{4})-(\d\d)-(\d\d)</, '<cbc:IssueDate>$3/$2/$1<')],
    ['FAD11', 'invoice', (x) => swap(x, '<cbc:InvoiceTypeCode>01</cbc:InvoiceTypeCode>', '')],
    ['FAD15', 'invoice', (x) => swap(x, '<cbc:DocumentCurrencyCode>COP</cbc:DocumentCurrencyCode>', '')],
    ['FAD15a', 'invoice', (x) => swap(x, '<cbc:DocumentCurrencyCode>COP<', '<cbc:DocumentCurrencyCode>ABC<')],
    ['FAB05a', 'invoice', (x) => swap(x, '<sts:InvoiceAuthorization>18760000001<', '<sts:InvoiceAuthorization><')],
    ['FAB10b', 'invoice', (x) => swap(x, '<sts:Prefix>SETP<', '<sts:Prefix>SETT<')],
    ['FAB19', 'invoice', (x) => swap(x, /(<sts:SoftwareID[^>]*>)[^<]+/, '$1')],
    ['FAB27', 'invoice', (x) => swap(x, /(<sts:SoftwareSecurityCode[^>]*>)[0-9a-f]{96}/, `$1${'1'.repeat(96)}`)],
    ['FAJ02', 'invoice', (x) => inside(x, S, '<cbc:AdditionalAccountID>1<', '<cbc:AdditionalAccountID>3<')],
    ['FAJ07', 'invoice', (x) => inside(x, S, /<cac:PhysicalLocation>.*<\/cac:PhysicalLocation>/, '')],
    ['FAJ08', 'invoice', (x) => inside(x, S, '<cbc:ID>11001<', '<cbc:ID>11002<')],
    ['FAJ12', 'invoice', (x) => inside(x, S, '<cbc:CountrySubentityCode>11<', '<cbc:CountrySubentityCode>05<')],
    ['FAJ16', 'invoice', (x) => inside(x, S, '<cbc:IdentificationCode>CO<', '<cbc:IdentificationCode>C0<')],
    ['FAJ19', 'invoice', (x) => inside(x, S, /<cac:PartyTaxScheme>.*<\/cac:PartyTaxScheme>/, '')],
    ['FAJ20', 'invoice', (x) => inside(x, S, /<cac:PartyTaxScheme><cbc:RegistrationName>[^<]+</, '<cac:PartyTaxScheme><cbc:RegistrationName><')],
    ['FAJ21', 'invoice', (x) => inside(x, S, /(<cac:PartyTaxScheme><cbc:RegistrationName>[^<]+<\/cbc:RegistrationName><cbc:CompanyID[^>]*>)900373115/, '$1')],
    ['FAJ24', 'invoice', (x) => inside(x, S, /schemeID="3" schemeName="31">900373115</g, 'schemeID="4" schemeName="31">900373115<')],
    ['FAJ26', 'invoice', (x) => inside(x, S, '>O-15<', '>O-99<')],
    ['FAJ40', 'invoice', (x) => inside(x, S, '<cac:TaxScheme><cbc:ID>01<', '<cac:TaxScheme><cbc:ID>99<')],
    ['FAJ42', 'invoice', (x) => inside(x, S, /<cac:PartyLegalEntity>.*<\/cac:PartyLegalEntity>/, '')],
    ['FAJ43', 'invoice', (x) => inside(x, S, /<cac:PartyLegalEntity><cbc:RegistrationName>[^<]+</, '<cac:PartyLegalEntity><cbc:RegistrationName><')],
    ['FAJ44', 'invoice', (x) => inside(x, S, /(<cac:PartyLegalEntity><cbc:RegistrationName>[^<]+<\/cbc:RegistrationName><cbc:CompanyID[^>]*>)900373115/, '$1900373116')],
    ['FAK02', 'invoice', (x) => inside(x, C, '<cbc:AdditionalAccountID>1<', '<cbc:AdditionalAccountID>7<')],
    ['FAK08', 'invoice', (x) => inside(x, C, '<cbc:ID>05001<', '<cbc:ID>99999<')],
    ['FAK12', 'invoice', (x) => inside(x, C, '<cbc:CountrySubentityCode>05<', '<cbc:CountrySubentityCode>11<')],
    ['FAK16', 'invoice', (x) => inside(x, C, '<cbc:IdentificationCode>CO<', '<cbc:IdentificationCode>Colombia<')],
    ['FAK19', 'invoice', (x) => inside(x, C, /<cac:PartyTaxScheme>.*<\/cac:PartyTaxScheme>/, '')],
    ['FAK20', 'invoice', (x) => inside(x, C, /<cac:PartyTaxScheme><cbc:RegistrationName>[^<]+</, '<cac:PartyTaxScheme><cbc:RegistrationName><')],
    ['FAK21', 'invoice', (x) => inside(x, C, /(<cac:PartyTaxScheme><cbc:RegistrationName>[^<]+<\/cbc:RegistrationName><cbc:CompanyID[^>]*>)800197268/, '$1')],
    ['FAK24', 'invoice', (x) => inside(x, C, /schemeID="4" schemeName="31">800197268</g, 'schemeID="5" schemeName="31">800197268<')],
    ['FAK26', 'invoice', (x) => inside(x, C, '>O-13;O-23<', '>O-13;Z-1<')],
    ['FAK40', 'invoice', (x) => inside(x, C, '<cac:TaxScheme><cbc:ID>01<', '<cac:TaxScheme><cbc:ID>XX<')],
    ['FAK42', 'invoice', (x) => inside(x, C, /<cac:PartyLegalEntity>.*<\/cac:PartyLegalEntity>/, '')],
    ['FAK43', 'invoice', (x) => inside(x, C, /<cac:PartyLegalEntity><cbc:RegistrationName>[^<]+</, '<cac:PartyLegalEntity><cbc:RegistrationName><')],
    ['FAK44', 'invoice', (x) => inside(x, C, /(<cac:PartyLegalEntity><cbc:RegistrationName>[^<]+<\/cbc:RegistrationName><cbc:CompanyID[^>]*>)800197268/, '$1800197269')],
    ['FAN01', 'invoice', (x) => swap(x, /<cac:PaymentMeans>.*?<\/cac:PaymentMeans>/, '')],
    ['FAN02', 'invoice', (x) => inside(x, 'cac:PaymentMeans', '<cbc:ID>2<', '<cbc:ID>3<')],
    ['FAN03', 'invoice', (x) => inside(x, 'cac:PaymentMeans', '<cbc:PaymentMeansCode>47<', '<cbc:PaymentMeansCode>99<')],
    ['FAN04', 'invoice', (x) => inside(x, 'cac:PaymentMeans', /<cbc:PaymentDueDate>[^<]+<\/cbc:PaymentDueDate>/, '')],
    ['FAS04', 'invoice', (x) => swap(x, /(<\/cbc:TaxAmount>)(<cac:TaxSubtotal>.*?<\/cac:TaxSubtotal>)(<\/cac:TaxTotal><cac:WithholdingTaxTotal>)/, '$1$2$2$3')],
    ['FAS07', 'invoice', (x) => swap(x, /(<cac:TaxSubtotal><cbc:TaxableAmount currencyID="COP">327751.39<\/cbc:TaxableAmount><cbc:TaxAmount currencyID="COP">)62272.76/, '$162277.76')],
    ['FAU01', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:TaxInclusiveAmount currencyID="COP">390024.15<', '<cbc:TaxInclusiveAmount currencyID="COP">390024.1<')],
    ['FAU02', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:LineExtensionAmount currencyID="COP">327751.39<', '<cbc:LineExtensionAmount currencyID="COP">327751.40<')],
    ['FAU04', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:TaxExclusiveAmount currencyID="COP">327751.39<', '<cbc:TaxExclusiveAmount currencyID="COP">300000.00<')],
    ['FAU06', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:TaxInclusiveAmount currencyID="COP">390024.15<', '<cbc:TaxInclusiveAmount currencyID="COP">390024.16<')],
    ['FAU08', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:AllowanceTotalAmount currencyID="COP">6555.03<', '<cbc:AllowanceTotalAmount currencyID="COP">6555.00<')],
    ['FAU10', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:ChargeTotalAmount currencyID="COP">50000.00<', '<cbc:ChargeTotalAmount currencyID="COP">5000.00<')],
    ['FAU14', 'invoice', (x) => inside(x, 'cac:LegalMonetaryTotal', '<cbc:PayableAmount currencyID="COP">433469.12<', '<cbc:PayableAmount currencyID="COP">390024.15<')],
    ['FAV01', 'invoice', (x) => swap(x, /<cac:InvoiceLine>.*<\/cac:InvoiceLine>/, '')],
    ['FAZ02', 'invoice', (x) => swap(x, '<cbc:Description>Consultoría</cbc:Description>', '<cbc:Description></cbc:Description>')],
    // The notes: what is theirs alone (F, the type code, their payment means and totals), and the
    // header rules whose value differs from the invoice's. The rest follow the list (below).
    ['CAD02', 'credit', (x) => swap(x, '<cbc:CustomizationID>20<', '<cbc:CustomizationID>10<')],
    ['CAD05', 'credit', (x) => swap(x, '<cbc:ID>NC1<', '<cbc:ID>NC-1<')],
    ['CAD11', 'credit', (x) => swap(x, '<cbc:CreditNoteTypeCode>91<', '<cbc:CreditNoteTypeCode>92<')],
    ['CAF02', 'credit', (x) => inside(x, 'cac:DiscrepancyResponse', '<cbc:ResponseCode>1</cbc:ResponseCode>', '')],
    ['CAF04', 'credit', (x) => inside(x, 'cac:BillingReference', /(<cbc:UUID[^>]*>)[0-9a-f]{96}/, '$1')],
    ['CAN02', 'credit', (x) => inside(x, 'cac:PaymentMeans', '<cbc:ID>1<', '<cbc:ID>0<')],
    ['CAN04', 'credit', (x) => inside(x, 'cac:PaymentMeans', '<cbc:ID>1<', '<cbc:ID>2<')],
    ['CAS04', 'credit', (x) => swap(x, /(<cac:TaxTotal><cbc:TaxAmount currencyID="COP">[^<]+<\/cbc:TaxAmount>)(<cac:TaxSubtotal>.*?<\/cac:TaxSubtotal>)/, '$1$2$2')],
    ['CAV01', 'credit', (x) => swap(x, /<cac:CreditNoteLine>.*<\/cac:CreditNoteLine>/, '')],
    ['DAD02', 'debit', (x) => swap(x, '<cbc:CustomizationID>30<', '<cbc:CustomizationID>20<')],
    ['DAD05', 'debit', (x) => swap(x, '<cbc:ID>ND1<', '<cbc:ID>ND 1<')],
    ['DAF02', 'debit', (x) => inside(x, 'cac:DiscrepancyResponse', '<cbc:ResponseCode>1<', '<cbc:ResponseCode>5<')],
    ['DAF04', 'debit', (x) => inside(x, 'cac:BillingReference', /(<cbc:UUID[^>]*>)[0-9a-f]{96}/, '$1')],
    ['DAS04', 'debit', (x) => swap(x, /(<cac:TaxTotal><cbc:TaxAmount currencyID="COP">[^<]+<\/cbc:TaxAmount>)(<cac:TaxSubtotal>.*?<\/cac:TaxSubtotal>)/, '$1$2$2')],
    ['DAV01', 'debit', (x) => swap(x, /<cac:DebitNoteLine>.*<\/cac:DebitNoteLine>/, '')],
    ['DAZ02', 'debit', (x) => swap(x, '<cbc:Description>Intereses</cbc:Description>', '<cbc:Description> </cbc:Description>')],
    ['CAD06', 'credit', (x) => swap(x, /(<cbc:UUID schemeID="2" schemeName="CUDE-SHA384">)[0-9a-f]{96}/, `$1${'0'.repeat(96)}`)],
    ['CAJ26', 'credit', (x) => inside(x, S, '>O-15<', '>R-99<')],
    ['CAK08', 'credit', (x) => inside(x, C, '<cbc:ID>05001<', '<cbc:ID>00000<')],
    ['CAU14', 'credit', (x) => inside(x, 'cac:LegalMonetaryTotal', /<cbc:PayableAmount currencyID="COP">[^<]+</, '<cbc:PayableAmount currencyID="COP">1.00<')],
    ['DAD06', 'debit', (x) => swap(x, /(<cbc:UUID schemeID="2" schemeName="CUDE-SHA384">)[0-9a-f]{96}/, `$1${'0'.repeat(96)}`)],
    ['DAN03', 'debit', (x) => inside(x, 'cac:PaymentMeans', '<cbc:PaymentMeansCode>47<', '<cbc:PaymentMeansCode>54<')],
    ['DAU02', 'debit', (x) => inside(x, 'cac:RequestedMonetaryTotal', /<cbc:LineExtensionAmount currencyID="COP">[^<]+</, '<cbc:LineExtensionAmount currencyID="COP">1.00<')],
  ];

  // A note's totals (its own amounts, by hand: the credit note 150,000.00 + IVA 19 % 28,500.00 = 178,500.00,
  // the debit note 1,000.00 at 0 %): each amount set to one no sum gives, or the group given one it lacks.
  const NOTES = [['CA', 'credit', 'cac:LegalMonetaryTotal'], ['DA', 'debit', 'cac:RequestedMonetaryTotal']] as const;
  const amount = (tag: string, name: string, value: string) => (x: string) => inside(x, tag, new RegExp(`<cbc:${name} currencyID="COP">[^<]+<`), `<cbc:${name} currencyID="COP">${value}<`);
  const added = (tag: string, name: string) => (x: string) => inside(x, tag, '<cbc:PayableAmount', `<cbc:${name} currencyID="COP">1.00</cbc:${name}><cbc:PayableAmount`);
  // A rule the list already names for a note (CAJ26, DAN03, CAU14, …) keeps its own test.
  const add = (...rows: typeof rules) => rules.push(...rows.filter(([id]) => !rules.some(([named]) => named === id)));
  for (const [p, kind, tag] of NOTES) {
    add(
      [`${p}S07`, kind, (x) => swap(x, /(<cac:TaxSubtotal><cbc:TaxableAmount currencyID="COP">[^<]+<\/cbc:TaxableAmount><cbc:TaxAmount currencyID="COP">)[^<]+/, '$199999.99')],
      [`${p}U01`, kind, amount(tag, 'TaxInclusiveAmount', '1.5')],
      [`${p}U02`, kind, amount(tag, 'LineExtensionAmount', '1.00')],
      [`${p}U04`, kind, amount(tag, 'TaxExclusiveAmount', '1.00')],
      [`${p}U06`, kind, amount(tag, 'TaxInclusiveAmount', '1.00')],
      [`${p}U08`, kind, added(tag, 'AllowanceTotalAmount')],
      [`${p}U10`, kind, added(tag, 'ChargeTotalAmount')],
      [`${p}U14`, kind, amount(tag, 'PayableAmount', '1.00')],
    );
  }
  // The rules one piece of code checks for the three kinds (sandbox.ts's required fields, dian-rules.ts's
  // header, partyRules, payment means and items) on a field the notes carry as the invoice does (the
  // same parties, currency, time, keys): the invoice's mutation is the note's test too.
  const SHARED = /^FA(J|K|D01$|D04$|D09$|D10$|D15$|D15a$|B19$|B27$|N02$|N03$|N04$|Z02$)/;
  for (const [rule, , mutate] of rules.filter(([id]) => SHARED.test(id))) {
    for (const [p, kind] of NOTES) add([p + rule.slice(2), kind, mutate]);
  }

  for (const [rule, kind, mutate] of rules) {
    it(`${rule}: refused`, async () => {
      const { errors } = await validateDocument(mutate(base[kind].xml), base[kind].lookup);
      expect(errors.some((e) => e.startsWith(`Regla: ${rule}, Rechazo: `)), errors.join('\n')).toBe(true);
    });
  }
});
