import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { upload } from '../src/modules/documents/tools/upload.ts';
import { party, startInvoices } from './setup.ts';
import { workspace } from './bills-helpers.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

/** The supplier (NIT 900373115-3, a valid DIAN check digit) and the buyer's NIT on the invoice. */
const SUPPLIER = { nit: '900373115', dv: '3', name: 'Suministros del Valle SAS' };
const BUYER_NIT = '800197268';
/** The supplier's technical key for its numbering range (the supplier's secret; known here because the test made it up). */
const TECH_KEY = '693ff6f2a553c3646a063436fd4dd9ded0311471';

interface Options { number?: string; payable?: string; withholdings?: boolean; cufe?: string; parentUuid?: string; wrap?: boolean; percent?: string }

/**
 * The CUFE by DOMAIN.md's formula, computed here with node's crypto on the literal strings of the
 * invoice below (not with the product's code): NumFac FecFac HorFac ValFac 01 ValIVA 04 ValINC 03
 * ValICA ValTot NitOFE NumAdq ClTec TipoAmbiente.
 */
function cufeOf(number: string): string {
  return createHash('sha384').update(`${number}2026-11-05` + `09:30:00-05:00` + `504800.00` + `01` + `95912.00` + `04` + `0.00` + `03` + `0.00` + `600712.00` + SUPPLIER.nit + BUYER_NIT + TECH_KEY + `2`).digest('hex');
}

/**
 * A supplier's UBL 2.1 invoice, written by hand: 2 lines at 19 % VAT.
 *   line 1: 10 × 12,500.00 = 125,000.00; VAT 19 % = 23,750.00
 *   line 2:  2 × 189,900.00 = 379,800.00; VAT 19 % = 72,162.00
 *   lines 504,800.00; VAT 95,912.00; payable 600,712.00.
 * Withholdings the supplier states (when asked): retefuente 2.5 % of 504,800.00 = 12,620.00;
 * ReteIVA 15 % of 95,912.00 = 14,386.80.
 */
function invoiceXml(o: Options = {}): string {
  const number = o.number ?? 'FEV-1001';
  const percent = o.percent ?? '19.00';
  const line = (id: number, desc: string, qty: string, price: string, net: string, vat: string) => `
  <cac:InvoiceLine>
    <cbc:ID>${id}</cbc:ID>
    <cbc:InvoicedQuantity unitCode="94">${qty}</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="COP">${net}</cbc:LineExtensionAmount>
    <cac:TaxTotal>
      <cbc:TaxAmount currencyID="COP">${vat}</cbc:TaxAmount>
      <cac:TaxSubtotal>
        <cbc:TaxableAmount currencyID="COP">${net}</cbc:TaxableAmount>
        <cbc:TaxAmount currencyID="COP">${vat}</cbc:TaxAmount>
        <cac:TaxCategory><cbc:Percent>${percent}</cbc:Percent><cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:TaxCategory>
      </cac:TaxSubtotal>
    </cac:TaxTotal>
    <cac:Item><cbc:Description>${desc}</cbc:Description></cac:Item>
    <cac:Price><cbc:PriceAmount currencyID="COP">${price}</cbc:PriceAmount><cbc:BaseQuantity unitCode="94">1.00</cbc:BaseQuantity></cac:Price>
  </cac:InvoiceLine>`;
  const withholding = (scheme: string, name: string, base: string, pct: string, amount: string) => `
  <cac:WithholdingTaxTotal>
    <cbc:TaxAmount currencyID="COP">${amount}</cbc:TaxAmount>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="COP">${base}</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="COP">${amount}</cbc:TaxAmount>
      <cac:TaxCategory><cbc:Percent>${pct}</cbc:Percent><cac:TaxScheme><cbc:ID>${scheme}</cbc:ID><cbc:Name>${name}</cbc:Name></cac:TaxScheme></cac:TaxCategory>
    </cac:TaxSubtotal>
  </cac:WithholdingTaxTotal>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:UBLVersionID>UBL 2.1</cbc:UBLVersionID>
  <cbc:CustomizationID>10</cbc:CustomizationID>
  <cbc:ProfileID>DIAN 2.1: Factura Electrónica de Venta</cbc:ProfileID>
  <cbc:ProfileExecutionID>2</cbc:ProfileExecutionID>
  <cbc:ID>${number}</cbc:ID>
  <cbc:UUID schemeID="2" schemeName="CUFE-SHA384">${o.cufe ?? cufeOf(number)}</cbc:UUID>
  <cbc:IssueDate>2026-11-05</cbc:IssueDate>
  <cbc:IssueTime>09:30:00-05:00</cbc:IssueTime>
  <cbc:DueDate>2026-12-05</cbc:DueDate>
  <cbc:InvoiceTypeCode>01</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>COP</cbc:DocumentCurrencyCode>
  <cbc:LineCountNumeric>2</cbc:LineCountNumeric>
  <cac:AccountingSupplierParty>
    <cbc:AdditionalAccountID>1</cbc:AdditionalAccountID>
    <cac:Party>
      <cac:PartyTaxScheme>
        <cbc:RegistrationName>${SUPPLIER.name}</cbc:RegistrationName>
        <cbc:CompanyID schemeAgencyID="195" schemeID="${SUPPLIER.dv}" schemeName="31">${SUPPLIER.nit}</cbc:CompanyID>
        <cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme>
      </cac:PartyTaxScheme>
    </cac:Party>
  </cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty>
    <cbc:AdditionalAccountID>1</cbc:AdditionalAccountID>
    <cac:Party>
      <cac:PartyTaxScheme>
        <cbc:RegistrationName>Cuadra Demo SAS</cbc:RegistrationName>
        <cbc:CompanyID schemeAgencyID="195" schemeID="4" schemeName="31">${BUYER_NIT}</cbc:CompanyID>
        <cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme>
      </cac:PartyTaxScheme>
    </cac:Party>
  </cac:AccountingCustomerParty>
  <cac:TaxTotal>
    <cbc:TaxAmount currencyID="COP">95912.00</cbc:TaxAmount>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="COP">504800.00</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="COP">95912.00</cbc:TaxAmount>
      <cac:TaxCategory><cbc:Percent>19.00</cbc:Percent><cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:TaxCategory>
    </cac:TaxSubtotal>
  </cac:TaxTotal>${o.withholdings ? withholding('06', 'ReteRenta', '504800.00', '2.50', '12620.00') + withholding('05', 'ReteIVA', '95912.00', '15.00', '14386.80') : ''}
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="COP">504800.00</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="COP">504800.00</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="COP">600712.00</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="COP">${o.payable ?? '600712.00'}</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>${line(1, 'Resma papel carta', '10.00', '12500.00', '125000.00', '23750.00')}${line(2, 'Tóner impresora láser', '2.00', '189900.00', '379800.00', '72162.00')}
</Invoice>`;
}

/** The DIAN AttachedDocument container the supplier sends: the invoice as CDATA in cbc:Description. */
function attachedDocument(o: Options = {}): string {
  const number = o.number ?? 'FEV-1001';
  return `<?xml version="1.0" encoding="UTF-8"?>
<AttachedDocument xmlns="urn:oasis:names:specification:ubl:schema:xsd:AttachedDocument-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:UBLVersionID>UBL 2.1</cbc:UBLVersionID>
  <cbc:CustomizationID>Documentos adjuntos</cbc:CustomizationID>
  <cbc:ProfileID>Factura Electrónica de Venta</cbc:ProfileID>
  <cbc:ProfileExecutionID>2</cbc:ProfileExecutionID>
  <cbc:ID>AD-${number}</cbc:ID>
  <cbc:IssueDate>2026-11-05</cbc:IssueDate>
  <cbc:IssueTime>09:31:00-05:00</cbc:IssueTime>
  <cbc:DocumentType>Contenedor de Factura Electrónica</cbc:DocumentType>
  <cbc:ParentDocumentID>${number}</cbc:ParentDocumentID>
  <cac:SenderParty><cac:PartyTaxScheme><cbc:RegistrationName>${SUPPLIER.name}</cbc:RegistrationName><cbc:CompanyID>${SUPPLIER.nit}</cbc:CompanyID></cac:PartyTaxScheme></cac:SenderParty>
  <cac:ReceiverParty><cac:PartyTaxScheme><cbc:RegistrationName>Cuadra Demo SAS</cbc:RegistrationName><cbc:CompanyID>${BUYER_NIT}</cbc:CompanyID></cac:PartyTaxScheme></cac:ReceiverParty>
  <cac:Attachment>
    <cac:ExternalReference>
      <cbc:MimeCode>text/xml</cbc:MimeCode>
      <cbc:EncodingCode>UTF-8</cbc:EncodingCode>
      <cbc:Description><![CDATA[${invoiceXml(o)}]]></cbc:Description>
    </cac:ExternalReference>
  </cac:Attachment>
  <cac:ParentDocumentLineReference>
    <cbc:LineID>1</cbc:LineID>
    <cac:DocumentReference>
      <cbc:ID>${number}</cbc:ID>
      <cbc:UUID schemeName="CUFE-SHA384">${o.parentUuid ?? o.cufe ?? cufeOf(number)}</cbc:UUID>
      <cbc:IssueDate>2026-11-05</cbc:IssueDate>
    </cac:DocumentReference>
  </cac:ParentDocumentLineReference>
</AttachedDocument>`;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

async function uploadText(owner: Principal, text: string, extra: Record<string, unknown> = {}) {
  return sg.call('documents.upload', { name: 'factura.xml', content_type: 'application/xml', content: b64(text), ...extra }, owner);
}

async function supplierParty(owner: Principal, kind: 'vendor' | 'both' | 'customer' = 'vendor'): Promise<string> {
  return party(owner, { name: SUPPLIER.name, kind, tax_id: { type: 'NIT', number: `${SUPPLIER.nit}-${SUPPLIER.dv}` } });
}

describe('documents: a supplier\'s AttachedDocument becomes a draft bill', () => {
  it('uploads, processes and writes the draft bill with amounts equal to the hand calculation', async () => {
    const owner = workspace();
    const vendorId = await supplierParty(owner);
    const text = attachedDocument({ withholdings: true });
    const r = await uploadText(owner, text, { account: '5195' });
    expect(r.ok).toBe(true);
    checkOutput('documents.upload', upload.output, r.output);
    const doc = r.output.document;
    expect(doc).toMatchObject({
      status: 'processed', reason: null, kind: 'xml', content_type: 'application/xml', size: Buffer.byteLength(text, 'utf8'),
      sha256: createHash('sha256').update(text, 'utf8').digest('hex'),
    });
    expect(r.output.duplicate).toBe(false);
    expect(doc.invoice).toEqual({ number: 'FEV-1001', cufe: cufeOf('FEV-1001'), supplier_nit: SUPPLIER.nit, supplier_name: SUPPLIER.name, issue_date: '2026-11-05', currency: 'COP', payable: 60071200 });
    expect(doc.bill_id).toMatch(/^bil_/);

    const b = await sg.call('bills.get', { id: doc.bill_id }, owner);
    expect(b.ok).toBe(true);
    const bill = b.output.bill;
    // By hand (cents): line 1 10 × 1,250,000 = 12,500,000, VAT 19 % 2,375,000;
    // line 2 2 × 18,990,000 = 37,980,000, VAT 7,216,200; subtotal 50,480,000; VAT 9,591,200;
    // total 60,071,200. retefuente 2.5 % × 50,480,000 = 1,262,000; ReteIVA 15 % × 9,591,200 = 1,438,680;
    // withholdings 2,700,680; owed 60,071,200 − 2,700,680 = 57,370,520.
    expect(bill.lines.map((l: any) => [l.description, l.account, l.quantity, l.unit_price, l.tax_rate_ppm, l.subtotal, l.tax, l.total])).toEqual([
      ['Resma papel carta', '5195', 10, 1250000, 190000, 12500000, 2375000, 14875000],
      ['Tóner impresora láser', '5195', 2, 18990000, 190000, 37980000, 7216200, 45196200],
    ]);
    expect(bill).toMatchObject({
      status: 'draft', vendor_id: vendorId, supplier_number: 'FEV-1001', currency: 'COP', issue_date: '2026-11-05', due_date: '2026-12-05',
      subtotal: 50480000, tax_total: 9591200, total: 60071200, withholding_total: 2700680, amount_due: 57370520, balance: 57370520,
    });
    expect(bill.withholdings).toEqual([
      { type: 'retefuente', rate_ppm: 25000, base: 50480000, amount: 1262000, concept: 'compras' },
      { type: 'reteiva', rate_ppm: 150000, base: 9591200, amount: 1438680 },
    ]);
    expect(bill.notes).toContain(cufeOf('FEV-1001'));

    // The draft bill posts like any other: a balanced entry.
    const posted = await sg.call('bills.post', { id: doc.bill_id }, owner);
    expect(posted.ok).toBe(true);
    const entry = (await sg.call('bills.get', { id: doc.bill_id }, owner)).output.journal_entry;
    const debits = entry.lines.reduce((s: number, l: any) => s + l.debit, 0);
    const credits = entry.lines.reduce((s: number, l: any) => s + l.credit, 0);
    expect([debits, credits]).toEqual([60071200, 60071200]);

    // The same file again: the existing document, no second bill.
    const again = await uploadText(owner, text);
    expect(again.ok).toBe(true);
    expect(again.output).toMatchObject({ duplicate: true, document: { id: doc.id, status: 'processed', bill_id: doc.bill_id } });
    const listed = await sg.call('bills.list', {}, owner);
    expect(listed.output.rows.map((x: any) => x.id)).toEqual([doc.bill_id]);

    const got = await sg.call('documents.get', { id: doc.id }, owner);
    expect(got.output.document).toEqual(again.output.document);
  });

  it('reads a bare UBL Invoice too, and recomputes the CUFE when the supplier\'s technical key is given', async () => {
    const owner = workspace();
    await supplierParty(owner, 'both');
    const r = await uploadText(owner, invoiceXml({ number: 'FEV-2002' }), { process: false });
    expect(r.output.document).toMatchObject({ status: 'uploaded', bill_id: null, invoice: null });
    const wrongKey = await sg.call('documents.process', { id: r.output.document.id, technical_key: 'not-the-key' }, owner);
    expect(wrongKey.ok).toBe(true);
    expect(wrongKey.output.document.status).toBe('failed');
    expect(wrongKey.output.document.reason).toContain('The CUFE does not match the invoice');
    const p = await sg.call('documents.process', { id: r.output.document.id, technical_key: TECH_KEY }, owner);
    expect(p.output.document).toMatchObject({ status: 'processed', reason: null });
    const bill = (await sg.call('bills.get', { id: p.output.document.bill_id }, owner)).output.bill;
    expect(bill).toMatchObject({ supplier_number: 'FEV-2002', subtotal: 50480000, tax_total: 9591200, total: 60071200, withholdings: [], amount_due: 60071200 });
    // Processing a processed document again changes nothing.
    const twice = await sg.call('documents.process', { id: r.output.document.id }, owner);
    expect(twice.output.document).toMatchObject({ status: 'processed', bill_id: p.output.document.bill_id });
    // The same invoice in another file (its AttachedDocument): a different SHA-256, but bills' one-bill-per-number rule fails it.
    const wrapped = await uploadText(owner, attachedDocument({ number: 'FEV-2002' }));
    expect(wrapped.output).toMatchObject({ duplicate: false, document: { status: 'failed', bill_id: null, reason: 'This vendor already has a bill with that supplier number in this workspace.' } });
  });

  it('a process that died after writing the bill is taken over a minute later and ends processed, with no second bill', async () => {
    const owner = workspace();
    await supplierParty(owner);
    const r = await uploadText(owner, attachedDocument({ number: 'FEV-2003' }));
    const doc = r.output.document;
    expect(doc.status).toBe('processed');
    // The state a crash between the bill's insert and the document's last step leaves behind.
    const stale = new Date(Date.now() - 5 * 60_000);
    await sg.db.collection('documents').updateOne({ _id: doc.id }, { $set: { status: 'processing', processing_at: stale, processed_bill: null } });
    const p = await sg.call('documents.process', { id: doc.id }, owner);
    expect(p.output.document).toMatchObject({ status: 'processed', bill_id: doc.bill_id });
    expect((await sg.call('bills.list', {}, owner)).output.rows.map((b: any) => b.id)).toEqual([doc.bill_id]);
    // A fresh claim is another process at work: a conflict, nothing changed.
    await sg.db.collection('documents').updateOne({ _id: doc.id }, { $set: { status: 'processing', processing_at: new Date() } });
    expect((await sg.call('documents.process', { id: doc.id }, owner)).code).toBe('conflict');
  });

  it('concurrent uploads of one file make one document and one bill; concurrent processing makes one bill', async () => {
    const owner = workspace();
    await supplierParty(owner);
    const text = attachedDocument({ number: 'FEV-2004' });
    const racing = await Promise.all(Array.from({ length: 4 }, () => uploadText(owner, text, { process: false })));
    expect(racing.every((r) => r.ok)).toBe(true);
    expect(new Set(racing.map((r) => r.output.document.id)).size).toBe(1);
    expect(racing.filter((r) => !r.output.duplicate)).toHaveLength(1);
    const id = racing[0]!.output.document.id;
    const processing = await Promise.all(Array.from({ length: 4 }, () => sg.call('documents.process', { id }, owner)));
    // Each call either ran the processing, found it done, or found another at work (conflict): never two bills.
    for (const p of processing) expect(p.ok ? p.output.document.status : p.code).toMatch(/^(processed|conflict)$/);
    expect(processing.filter((p) => p.ok).length).toBeGreaterThanOrEqual(1);
    const bills = (await sg.call('bills.list', {}, owner)).output.rows;
    expect(bills).toHaveLength(1);
    expect((await sg.call('documents.get', { id }, owner)).output.document).toMatchObject({ status: 'processed', bill_id: bills[0].id });
    expect((await sg.call('documents.list', {}, owner)).output.rows).toHaveLength(1);
  });

  it('a supplier that is not a party fails with the reason; once added, processing again makes the bill', async () => {
    const owner = workspace();
    const r = await uploadText(owner, attachedDocument({ number: 'FEV-3003' }));
    expect(r.output.document).toMatchObject({ status: 'failed', bill_id: null });
    expect(r.output.document.reason).toMatch(/^supplier 900373115 is not a party yet/);
    await supplierParty(owner);
    const p = await sg.call('documents.process', { id: r.output.document.id }, owner);
    expect(p.output.document).toMatchObject({ status: 'processed', reason: null });
  });

  it('a supplier that is only a customer in crm fails with crm\'s reason', async () => {
    const owner = workspace();
    await supplierParty(owner, 'customer');
    const r = await uploadText(owner, attachedDocument({ number: 'FEV-3004' }));
    expect(r.output.document.status).toBe('failed');
    expect(r.output.document.reason).toContain('is a customer, not a vendor');
  });
});

describe('documents: files that cannot become a bill fail with the reason', () => {
  let owner: Principal;
  beforeAll(async () => {
    owner = workspace();
    await supplierParty(owner);
  });
  const failed = async (text: string, extra: Record<string, unknown> = {}) => {
    const r = await uploadText(owner, text, extra);
    expect(r.ok).toBe(true);
    expect(r.output.document.status).toBe('failed');
    expect(r.output.document.bill_id).toBeNull();
    return r.output.document.reason as string;
  };

  it('a tampered total', async () => {
    // 600,712.00 + 100,000.00 written as payable: lines plus VAT are still 600,712.00.
    expect(await failed(attachedDocument({ number: 'FEV-4001', payable: '700712.00' }))).toBe('Lines plus VAT are 600712, but cbc:PayableAmount says 700712.');
  });
  it('a line VAT that does not follow from its rate', async () => {
    expect(await failed(attachedDocument({ number: 'FEV-4002', percent: '5.00' }))).toBe('Line 1: VAT at 5 % of 125000 is 6250, but the line says 23750.');
  });
  it('a CUFE that is not a SHA-384, and a wrapper naming another CUFE', async () => {
    expect(await failed(attachedDocument({ number: 'FEV-4003', cufe: 'abc' }))).toContain('is missing or is not 96 lower-case hex digits');
    expect(await failed(attachedDocument({ number: 'FEV-4004', parentUuid: 'f'.repeat(96) }))).toContain(`names CUFE ${'f'.repeat(96)} but the invoice inside it carries`);
  });
  it('not XML, XML that is not UBL, a PDF, a DTD', async () => {
    expect(await failed('this is not xml at all')).toMatch(/^The file is not well-formed XML/);
    expect(await failed('<note><to>Tove</to></note>')).toBe('The file is XML but not a UBL 2.1 Invoice or DIAN AttachedDocument (its root is note).');
    expect(await failed('%PDF-1.4 fake', { content_type: 'application/pdf', name: 'factura.pdf' })).toMatch(/^A application\/pdf file cannot be read as an e-invoice/);
    expect(await failed('<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>')).toMatch(/^The file is not well-formed XML/);
  });

  it('lists and reads documents by kind and status, in the list tool and the records source', async () => {
    const listed = await sg.call('documents.list', { status: 'failed', kind: 'pdf' }, owner);
    expect(listed.output.rows.map((d: any) => d.name)).toEqual(['factura.pdf']);
    const all = await sg.call('documents.list', { status: 'failed' }, owner);
    expect(all.output.rows).toHaveLength(8);
    const rec = await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'documents', kind: 'xml', status: 'failed', search: 'fev-4001' } }, owner);
    expect(rec.body.data.invoicesRecords.rows.map((x: any) => [x.supplier_number, x.status, x.kind])).toEqual([['FEV-4001', 'failed', 'xml']]);
    const badKind = await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'documents', kind: 'word' } }, owner);
    expect(badKind.body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/kind' });
  });
});

describe('documents: refusals and workspace sealing', () => {
  it('refuses bad input with the contract code and field', async () => {
    const owner = workspace();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'f.xml', content_type: 'application/xml', content: '***not base64***' }, '/content'],
      [{ name: 'f.xml', content_type: 'xml', content: b64('<a/>') }, '/content_type'],
      [{ name: '', content_type: 'application/xml', content: b64('<a/>') }, '/name'],
      [{ name: 'f.xml', content_type: 'application/xml', content: b64('<a/>'), account: '4135' }, '/account'],
      [{ name: 'f.xml', content_type: 'application/xml', content: 'A'.repeat(699053) }, '/content'],
    ];
    for (const [input, field] of cases) {
      const r = await sg.call('documents.upload', input, owner);
      expect([r.code, r.field]).toEqual(['invalid_input', field]);
    }
    expect((await sg.call('documents.get', { id: 'doc_nope' }, owner)).code).toBe('not_found');
    expect((await sg.call('documents.process', { id: 'doc_nope' }, owner)).code).toBe('not_found');
    expect((await sg.call('documents.list', { status: 'done' }, owner))).toMatchObject({ code: 'invalid_input', field: '/status' });
  });

  it('another workspace sees nothing, and the same file there is its own document', async () => {
    const owner = workspace();
    await supplierParty(owner);
    const text = attachedDocument({ number: 'FEV-5005' });
    const mine = await uploadText(owner, text);
    expect(mine.output.document.status).toBe('processed');
    const stranger = workspace();
    expect((await sg.call('documents.get', { id: mine.output.document.id }, stranger)).code).toBe('not_found');
    expect((await sg.call('documents.process', { id: mine.output.document.id }, stranger)).code).toBe('not_found');
    expect((await sg.call('documents.list', {}, stranger)).output.rows).toEqual([]);
    const rec = await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'documents' } }, stranger);
    expect(rec.body.data.invoicesRecords.rows).toEqual([]);
    const theirs = await uploadText(stranger, text);
    expect(theirs.output.duplicate).toBe(false);
    expect(theirs.output.document.id).not.toBe(mine.output.document.id);
    // The stranger's crm has no such supplier: its copy fails, the owner's stays processed.
    expect(theirs.output.document.reason).toMatch(/^supplier 900373115 is not a party yet/);
    expect((await sg.call('documents.get', { id: mine.output.document.id }, owner)).output.document.status).toBe('processed');
  });
});
