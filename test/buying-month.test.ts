// A company's month of buying and paying, over real HTTP through the gateway (issue 16, "done
// when"): vendors in crm, a purchase order received in part and converted into a bill, a
// supplier's DIAN AttachedDocument uploaded through documents.* becoming a draft bill, bills
// posted with retefuente, ReteIVA and ReteICA, a payment run created, approved, exported
// (pain.001 checked by xmllint against the XSD kept in the repository) and confirmed, a camt.053
// statement imported and reconciled. Every journal entry must balance; every metric, source and
// the payables lane must equal the hand calculations written out below.
import { createHash } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAMT_XSD, camt053, xmllint } from '../subgraphs/invoices/test/bank-helpers.ts';
import { pain001Xsd, xmllintValidate } from '../subgraphs/invoices/test/iso20022-schemas.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let workspaceId: string;
const ids: Record<string, string> = {};
const docs: Record<string, any> = {};

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}
async function refused(tool: string, input: unknown, k = key) {
  const r = await sys.invoke(tool, input, k);
  return { status: r.status, ...r.body };
}
async function graph(query: string, variables: Record<string, unknown> = {}) {
  const r = await sys.fetch('/graphql', { key, body: { query, variables } });
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data;
}
const metric = (q: Record<string, unknown>) => ok('metrics.query', q);
const records = (q: Record<string, unknown>) => ok('records.list', q);
/**
 * The same read through the invoices graph: the gateway's records.list holds the specification's
 * kind/ref rules (§2.5), which do not name the kinds and refs these finance sources also answer
 * (bank_transactions by account, documents by file kind, payment_formats by family).
 */
const sourceRows = async (q: Record<string, unknown>) => (await graph('query($q: JSON!) { invoicesRecords(query: $q) }', { q })).invoicesRecords;

// ---------------------------------------------------------------------------------------------
// The supplier's e-invoice, written by hand (Suministros del Valle SAS, NIT 900373115-3):
//   line 1: 10 × 12,500.00 = 125,000.00; VAT 19 % = 23,750.00
//   line 2:  2 × 189,900.00 = 379,800.00; VAT 19 % = 72,162.00
//   net 504,800.00; VAT 95,912.00; total 600,712.00.
// Withholdings we make (stated on the invoice too):
//   retefuente 2.5 % of 504,800.00 = 12,620.00
//   ReteIVA 15 % of 95,912.00 = 14,386.80
//   ReteICA 9.66 ‰ of 504,800.00 = 4,876.368 → 4,876.37 (half away from zero)
//   withholdings 31,883.17; owed 600,712.00 − 31,883.17 = 568,828.83.
// ---------------------------------------------------------------------------------------------
const SUPPLIER = { nit: '900373115', dv: '3', name: 'Suministros del Valle SAS' };
const BUYER_NIT = '860002964';
const SUPPLIER_TECH_KEY = '693ff6f2a553c3646a063436fd4dd9ded0311471';
const FEV = 'FEV-1001';

/** DOMAIN.md's CUFE over the invoice's literal strings, with node's crypto (not the product's code). */
const CUFE = createHash('sha384').update(`${FEV}2026-11-05` + '09:30:00-05:00' + '504800.00' + '01' + '95912.00' + '04' + '0.00' + '03' + '0.00' + '600712.00' + SUPPLIER.nit + BUYER_NIT + SUPPLIER_TECH_KEY + '2').digest('hex');

function supplierInvoice(email?: string): string {
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
        <cac:TaxCategory><cbc:Percent>19.00</cbc:Percent><cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:TaxCategory>
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
  <cbc:ID>${FEV}</cbc:ID>
  <cbc:UUID schemeID="2" schemeName="CUFE-SHA384">${CUFE}</cbc:UUID>
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
      </cac:PartyTaxScheme>${email ? `
      <cac:Contact><cbc:ElectronicMail>${email}</cbc:ElectronicMail></cac:Contact>` : ''}
    </cac:Party>
  </cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty>
    <cbc:AdditionalAccountID>1</cbc:AdditionalAccountID>
    <cac:Party>
      <cac:PartyTaxScheme>
        <cbc:RegistrationName>Cuadra Compras SAS</cbc:RegistrationName>
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
  </cac:TaxTotal>${withholding('06', 'ReteRenta', '504800.00', '2.50', '12620.00')}${withholding('05', 'ReteIVA', '95912.00', '15.00', '14386.80')}${withholding('07', 'ReteICA', '504800.00', '0.966', '4876.37')}
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="COP">504800.00</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="COP">504800.00</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="COP">600712.00</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="COP">600712.00</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>${line(1, 'Resma papel carta', '10.00', '12500.00', '125000.00', '23750.00')}${line(2, 'Tóner impresora láser', '2.00', '189900.00', '379800.00', '72162.00')}
</Invoice>`;
}

/** The DIAN AttachedDocument the supplier sends: the invoice in CDATA, its CUFE named again. */
function attachedDocument(email?: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<AttachedDocument xmlns="urn:oasis:names:specification:ubl:schema:xsd:AttachedDocument-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:UBLVersionID>UBL 2.1</cbc:UBLVersionID>
  <cbc:CustomizationID>Documentos adjuntos</cbc:CustomizationID>
  <cbc:ProfileID>Factura Electrónica de Venta</cbc:ProfileID>
  <cbc:ProfileExecutionID>2</cbc:ProfileExecutionID>
  <cbc:ID>AD-${FEV}</cbc:ID>
  <cbc:IssueDate>2026-11-05</cbc:IssueDate>
  <cbc:IssueTime>09:31:00-05:00</cbc:IssueTime>
  <cbc:DocumentType>Contenedor de Factura Electrónica</cbc:DocumentType>
  <cbc:ParentDocumentID>${FEV}</cbc:ParentDocumentID>
  <cac:SenderParty><cac:PartyTaxScheme><cbc:RegistrationName>${SUPPLIER.name}</cbc:RegistrationName><cbc:CompanyID>${SUPPLIER.nit}</cbc:CompanyID></cac:PartyTaxScheme></cac:SenderParty>
  <cac:ReceiverParty><cac:PartyTaxScheme><cbc:RegistrationName>Cuadra Compras SAS</cbc:RegistrationName><cbc:CompanyID>${BUYER_NIT}</cbc:CompanyID></cac:PartyTaxScheme></cac:ReceiverParty>
  <cac:Attachment>
    <cac:ExternalReference>
      <cbc:MimeCode>text/xml</cbc:MimeCode>
      <cbc:EncodingCode>UTF-8</cbc:EncodingCode>
      <cbc:Description><![CDATA[${supplierInvoice(email)}]]></cbc:Description>
    </cac:ExternalReference>
  </cac:Attachment>
  <cac:ParentDocumentLineReference>
    <cbc:LineID>1</cbc:LineID>
    <cac:DocumentReference><cbc:ID>${FEV}</cbc:ID><cbc:UUID schemeName="CUFE-SHA384">${CUFE}</cbc:UUID><cbc:IssueDate>2026-11-05</cbc:IssueDate></cac:DocumentReference>
  </cac:ParentDocumentLineReference>
</AttachedDocument>`;
}

// ---------------------------------------------------------------------------------------------
// Hand figures of the month (cents).
//
// Purchase order to Tecnología Ñandú SAS (NIT 800197268-4), 2 Nov:
//   0: 4 × portátil 2,500,000.00 (1528, asset), VAT 19 %     — 3 received on 6 Nov
//   1: 6 h × instalación 90,000.00 (5135, expense), VAT 19 % — 6 received on 6 Nov
// Converted on 6 Nov into bill FE-501 (due 18 Nov) of what was received:
//   0: 3 × 250,000,000 = 750,000,000; VAT 142,500,000
//   1: 6 × 9,000,000   =  54,000,000; VAT  10,260,000
//   net 804,000,000; VAT 152,760,000; total 956,760,000
//   retefuente 2.5 % × 804,000,000 = 20,100,000, by concept: compras (1528) 2.5 % × 750,000,000 = 18,750,000
//   and servicios (5135) 2.5 % × 54,000,000 = 1,350,000; ReteIVA 15 % × 152,760,000 = 22,914,000;
//   ReteICA 9.66 ‰ × 804,000,000 = 7,766,640; withholdings 50,780,640; owed 905,979,360.
// Supplier e-invoice FEV-1001 (Suministros del Valle, 5 Nov, due 5 Dec), lines charged to 5195:
//   net 50,480,000; VAT 9,591,200; total 60,071,200; retefuente 1,262,000; ReteIVA 1,438,680;
//   ReteICA 487,637; withholdings 3,188,317; owed 56,882,883.
// Rent ARR-11 (Inmobiliaria Centro Ltda, NIT 860002964-4, 1 Nov, due 10 Nov), 5120:
//   1 × 450,000,000; VAT 19 % 85,500,000; total 535,500,000; retefuente 3.5 % 15,750,000 (arrendamientos, 236530);
//   ReteIVA 15 % 12,825,000; withholdings 28,575,000; owed 506,925,000. Never paid this month.
// Payment run of FE-501 and FEV-1001, paid by the bank on 20 Nov:
//   905,979,360 + 56,882,883 = 962,862,243 (9,628,622.43 COP), 2 transfers.
// Statement (camt.053) of the account: −9,628,622.43 (the run, 20 Nov), −23,800.00 (the bank's
//   fee, 20 Nov, reconciled to 530505 gastos bancarios), +1,250.00 (interest, 21 Nov, left open).
// ---------------------------------------------------------------------------------------------
const PO_BILL = { subtotal: 804000000, tax_total: 152760000, total: 956760000, withholding_total: 50780640, amount_due: 905979360 };
const FEV_BILL = { subtotal: 50480000, tax_total: 9591200, total: 60071200, withholding_total: 3188317, amount_due: 56882883 };
const RENT_BILL = { subtotal: 450000000, tax_total: 85500000, total: 535500000, withholding_total: 28575000, amount_due: 506925000 };
const RUN_TOTAL = 962862243;
const FEE = 2380000;
const INTEREST = 125000;
const IBAN = 'CO98765432109876';

beforeAll(async () => {
  sys = await startTestSystem('buymonth');
  const ws = await sys.workspace('Cuadra Compras SAS');
  key = ws.api_key;
  workspaceId = ws.workspace_id;
});
afterAll(async () => {
  await sys?.stop();
});

describe('a month of buying and paying', () => {
  it('sets up the vendors in crm', async () => {
    ids.valle = (await ok('parties.create', { name: SUPPLIER.name, kind: 'vendor', tax_id: { type: 'NIT', number: `${SUPPLIER.nit}-${SUPPLIER.dv}` } })).party.id;
    ids.nandu = (await ok('parties.create', { name: 'Tecnología Ñandú SAS', kind: 'vendor', tax_id: { type: 'NIT', number: '800197268-4' } })).party.id;
    ids.centro = (await ok('parties.create', { name: 'Inmobiliaria Centro Ltda', kind: 'both', tax_id: { type: 'NIT', number: '860002964-4' } })).party.id;
  });

  it('orders, receives part of the order and converts what came into a bill', async () => {
    const po = (await ok('purchase_orders.create', {
      vendor_id: ids.nandu, currency: 'COP', order_date: '2026-11-02', expected_date: '2026-11-06',
      lines: [
        { description: 'Portátil 14"', account: '1528', quantity: 4, unit_price: 250000000, tax_rate_ppm: 190000 },
        { description: 'Instalación y configuración', account: '5135', quantity: 6, unit_price: 9000000, tax_rate_ppm: 190000 },
      ],
    })).purchase_order;
    // Ordered: 4 × 2,500,000.00 + 19 % = 11,900,000.00; 6 × 90,000.00 + 19 % = 642,600.00; total 12,542,600.00.
    expect(po).toMatchObject({ status: 'draft', total: 1254260000 });
    await ok('purchase_orders.send', { id: po.id });
    const received = (await ok('purchase_orders.receive', { id: po.id, date: '2026-11-06', lines: [{ line: 0, quantity: 3 }, { line: 1, quantity: 6 }] })).purchase_order;
    expect(received.status).toBe('partially_received');
    expect(await refused('purchase_orders.receive', { id: po.id, lines: [{ line: 0, quantity: 2 }] })).toMatchObject({ status: 422, code: 'invalid_input', field: '/lines/0/quantity' });
    const converted = await ok('purchase_orders.convert', {
      id: po.id, supplier_number: 'FE-501', issue_date: '2026-11-06', due_date: '2026-11-18',
      withholdings: [{ type: 'retefuente', rate_ppm: 25000 }, { type: 'reteiva', rate_ppm: 150000 }, { type: 'reteica', rate_ppm: 9660 }],
    });
    expect(converted.purchase_order).toMatchObject({ status: 'billed', bill_id: converted.bill.id });
    expect(converted.bill).toMatchObject({ status: 'draft', vendor_id: ids.nandu, ...PO_BILL });
    expect(converted.bill.lines.map((l: any) => [l.account, l.quantity, l.subtotal, l.tax])).toEqual([['1528', 3, 750000000, 142500000], ['5135', 6, 54000000, 10260000]]);
    expect(converted.bill.withholdings).toEqual([
      { type: 'retefuente', rate_ppm: 25000, base: 750000000, amount: 18750000, concept: 'compras' },
      { type: 'retefuente', rate_ppm: 25000, base: 54000000, amount: 1350000, concept: 'servicios' },
      { type: 'reteiva', rate_ppm: 150000, base: 152760000, amount: 22914000 },
      { type: 'reteica', rate_ppm: 9660, base: 804000000, amount: 7766640 },
    ]);
    ids.po = po.id;
    ids.poBill = converted.bill.id;
    expect(await refused('purchase_orders.convert', { id: po.id, supplier_number: 'FE-502' })).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('uploads the supplier\'s AttachedDocument: checked, its CUFE recomputed, a draft bill with the three withholdings', async () => {
    const text = attachedDocument();
    const up = await ok('documents.upload', { name: `ad${SUPPLIER.nit}${FEV}.xml`, content_type: 'application/xml', content: Buffer.from(text).toString('base64'), process: false });
    expect(up.document).toMatchObject({ status: 'uploaded', bill_id: null, sha256: createHash('sha256').update(text).digest('hex') });
    // With the wrong technical key the recomputed CUFE differs: failed, with the reason.
    const wrong = (await ok('documents.process', { id: up.document.id, technical_key: 'f'.repeat(40) })).document;
    expect(wrong.status).toBe('failed');
    expect(wrong.reason).toContain('The CUFE does not match');
    const done = (await ok('documents.process', { id: up.document.id, technical_key: SUPPLIER_TECH_KEY })).document;
    expect(done).toMatchObject({ status: 'processed', reason: null });
    expect(done.invoice).toEqual({ number: FEV, cufe: CUFE, supplier_nit: SUPPLIER.nit, supplier_name: SUPPLIER.name, issue_date: '2026-11-05', currency: 'COP', payable: 60071200 });
    const bill = (await ok('bills.get', { id: done.bill_id })).bill;
    expect(bill).toMatchObject({ status: 'draft', vendor_id: ids.valle, supplier_number: FEV, due_date: '2026-12-05', ...FEV_BILL });
    expect(bill.withholdings).toEqual([
      { type: 'retefuente', rate_ppm: 25000, base: 50480000, amount: 1262000, concept: 'compras' },
      { type: 'reteiva', rate_ppm: 150000, base: 9591200, amount: 1438680 },
      { type: 'reteica', rate_ppm: 9660, base: 50480000, amount: 487637 },
    ]);
    ids.doc = done.id;
    ids.fevBill = bill.id;
    // The same file again answers the same document and makes no second bill.
    const again = await ok('documents.upload', { name: 'otra-vez.xml', content_type: 'application/xml', content: Buffer.from(text).toString('base64') });
    expect(again).toMatchObject({ duplicate: true, document: { id: done.id, bill_id: bill.id } });
  });

  it('records the rent and posts the three bills, each a balanced entry', async () => {
    const rent = (await ok('bills.create', {
      vendor_id: ids.centro, supplier_number: 'ARR-11', currency: 'COP', issue_date: '2026-11-01', due_date: '2026-11-10',
      lines: [{ description: 'Arriendo oficina noviembre', account: '5120', quantity: 1, unit_price: 450000000, tax_rate_ppm: 190000 }],
      withholdings: [{ type: 'retefuente', rate_ppm: 35000 }, { type: 'reteiva', rate_ppm: 150000 }],
    })).bill;
    expect(rent).toMatchObject(RENT_BILL);
    ids.rent = rent.id;
    for (const id of [ids.rent, ids.fevBill, ids.poBill]) expect((await ok('bills.post', { id })).bill.status).toBe('posted');
    expect(await refused('bills.post', { id: ids.rent })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('bills.update', { id: ids.rent, notes: 'x' })).toMatchObject({ status: 409, code: 'conflict' });
    // FE-501's entry by hand: Dr 1528 750,000,000, Dr 5135 54,000,000, Dr 240810 152,760,000 =
    // 956,760,000; Cr 220505 905,979,360, Cr 236540 18,750,000 (compras), Cr 236525 1,350,000 (servicios),
    // Cr 236740 22,914,000, Cr 236801 7,766,640.
    const po = await ok('bills.get', { id: ids.poBill });
    const lines = Object.fromEntries(po.journal_entry.lines.map((l: any) => [l.account, l.debit - l.credit]));
    expect(lines).toEqual({ 1528: 750000000, 5135: 54000000, 240810: 152760000, 220505: -905979360, 236540: -18750000, 236525: -1350000, 236740: -22914000, 236801: -7766640 });
  });

  it('pays FE-501 and FEV-1001 in a run: approved, pain.001 valid against the XSD, confirmed once', async () => {
    const debtor = { name: 'Cuadra Compras SAS', tax_id: BUYER_NIT, account_number: '98765432109876', account_type: 'checking', bic: 'COLOCOBM' };
    const payees = [
      { vendor_id: ids.nandu, account_number: '00112233445', account_type: 'savings', bank_code: '5600078', bic: 'COLOCOBM' },
      { vendor_id: ids.valle, account_number: '998877665544', account_type: 'checking', bank_code: '5100010' },
    ];
    const run = (await ok('payment_runs.create', { currency: 'COP', bank_account: '111005', bill_ids: [ids.poBill, ids.fevBill], payment_date: '2026-11-20', debtor, payees })).payment_run;
    expect(run).toMatchObject({ status: 'draft', count: 2, total: RUN_TOTAL });
    expect(run.lines.map((l: any) => [l.supplier_number, l.amount])).toEqual([['FE-501', 905979360], ['FEV-1001', 56882883]]);
    expect(await refused('payment_runs.approve', { id: run.id, amount: RUN_TOTAL + 1 })).toMatchObject({ status: 422, code: 'invalid_input', field: '/amount' });
    expect(await refused('payment_runs.export', { id: run.id, format: 'pain.001.001.03' })).toMatchObject({ status: 409, code: 'conflict' });
    expect((await ok('payment_runs.approve', { id: run.id, amount: RUN_TOTAL })).payment_run.status).toBe('approved');
    const exported = await ok('payment_runs.export', { id: run.id, format: 'pain.001.001.03' });
    expect(exported.file).toMatchObject({ transactions: 2, control_sum: '9628622.43' });
    const check = xmllintValidate(exported.file.content, pain001Xsd());
    expect(check.output).toContain('validates');
    expect(check.valid).toBe(true);
    const pain = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (n) => n === 'CdtTrfTxInf' }).parse(exported.file.content).Document.CstmrCdtTrfInitn;
    expect(pain.GrpHdr).toMatchObject({ NbOfTxs: '2', CtrlSum: '9628622.43' });
    expect(pain.PmtInf.CdtTrfTxInf.map((x: any) => [x.Cdtr.Nm, x.Amt.InstdAmt['#text'], x.CdtrAcct.Id.Othr.Id])).toEqual([
      ['Tecnología Ñandú SAS', '9059793.60', '00112233445'], ['Suministros del Valle SAS', '568828.83', '998877665544'],
    ]);
    const confirmed = (await ok('payment_runs.confirm', { id: run.id, paid_on: '2026-11-20' })).payment_run;
    expect(confirmed).toMatchObject({ status: 'confirmed', paid_on: '2026-11-20' });
    expect(await refused('payment_runs.confirm', { id: run.id })).toMatchObject({ status: 409, code: 'conflict' });
    for (const id of [ids.poBill, ids.fevBill]) expect((await ok('bills.get', { id })).bill).toMatchObject({ status: 'paid', balance: 0 });
    ids.run = run.id;
    docs.run = confirmed;
  });

  it('imports the camt.053 statement (valid against the XSD), once, and reconciles it', async () => {
    ids.bank = (await ok('bank.create_account', { name: 'Corriente Bancolombia', bank_name: 'Bancolombia', account_number: IBAN, currency: 'COP', opening_date: '2026-11-01' })).account.id;
    const statement = camt053({
      id: 'STMT-2026-11', iban: IBAN, currency: 'COP', entries: [
        { ref: 'BC-0001', amount: '9628622.43', sign: 'DBIT', date: '2026-11-20', info: `PAGO PROVEEDORES ${ids.run}` },
        { ref: 'BC-0002', amount: '23800.00', sign: 'DBIT', date: '2026-11-20', info: 'COMISION PAGO PROVEEDORES' },
        { ref: 'BC-0003', amount: '1250.00', sign: 'CRDT', date: '2026-11-21', info: 'ABONO INTERESES' },
      ],
    });
    xmllint(statement, CAMT_XSD);
    const first = (await ok('bank.import_statement', { bank_id: ids.bank, format: 'camt053', content: statement })).import;
    expect(first).toMatchObject({ entries: 3, added: 3, already_there: 0 });
    const second = (await ok('bank.import_statement', { bank_id: ids.bank, format: 'camt053', content: statement })).import;
    expect(second).toMatchObject({ entries: 3, added: 0, already_there: 3 });

    const txs = (await sourceRows({ source: 'bank_transactions', ref: ids.bank, limit: 10 })).rows;
    const byRef = Object.fromEntries(txs.map((t: any) => [t.reference ?? t.description, t]));
    const tx = (amount: number) => txs.find((t: any) => t.amount === amount).id;
    expect(txs.map((t: any) => t.amount).sort((a: number, b: number) => a - b)).toEqual([-RUN_TOTAL, -FEE, INTEREST]);
    expect(Object.keys(byRef)).toHaveLength(3);

    // A rule proposes the bank fee's account; the run's debit is set against its two payments.
    await ok('bank.create_rule', { name: 'Comisiones bancarias', description_contains: 'COMISION', sign: 'debit', propose: { kind: 'account', account_code: '530505' } });
    const suggested = (await ok('bank.suggest', { transaction_id: tx(-FEE) })).suggestions;
    expect(JSON.stringify(suggested)).toContain('530505');
    await ok('bank.reconcile', { transaction_id: tx(-FEE), matches: [{ account: '530505', amount: FEE }] });
    const parts = docs.run.lines.map((l: any) => ({ payment_id: l.payment_id, amount: l.amount }));
    expect(await refused('bank.reconcile', { transaction_id: tx(-RUN_TOTAL), matches: [parts[0]] })).toMatchObject({ status: 422, code: 'invalid_input', field: '/matches' });
    const rec = (await ok('bank.reconcile', { transaction_id: tx(-RUN_TOTAL), matches: parts })).transaction;
    expect(rec.status).toBe('reconciled');
    ids.txRun = tx(-RUN_TOTAL);
    ids.txInterest = tx(INTEREST);
  });

  it('keeps every journal entry balanced, and each account equal to the hand figures', async () => {
    const entries = (await ok('journal.list', { from: '2026-11-01', to: '2026-11-30', limit: 100 })).rows;
    // 3 bills posted + 2 payments of the run + the bank fee = 6 (the run's debit reconciled to
    // payments already recorded adds no entry).
    expect(entries).toHaveLength(6);
    for (const e of entries) {
      expect(e.total_debit, e.memo).toBe(e.total_credit);
      expect(e.lines.reduce((s: number, l: any) => s + l.debit, 0), e.memo).toBe(e.lines.reduce((s: number, l: any) => s + l.credit, 0));
    }
    const net = (account: string) => entries.flatMap((e: any) => e.lines).filter((l: any) => l.account === account).reduce((s: number, l: any) => s + l.debit - l.credit, 0);
    expect(net('220505')).toBe(-RENT_BILL.amount_due); // only the rent is owed at the end
    // Retención en la fuente by concept: compras FE-501's 18,750,000 + FEV-1001's 1,262,000 (5195); servicios FE-501's 1,350,000; the rent 15,750,000.
    expect([net('236540'), net('236525'), net('236530')]).toEqual([-(18750000 + 1262000), -1350000, -15750000]);
    expect(net('236740')).toBe(-(22914000 + 1438680 + 12825000));
    expect(net('236801')).toBe(-(7766640 + 487637));
    expect(net('240810')).toBe(152760000 + 9591200 + 85500000);
    expect([net('1528'), net('5135'), net('5195'), net('5120')]).toEqual([750000000, 54000000, 50480000, 450000000]);
    expect(net('111005')).toBe(-(RUN_TOTAL + FEE));
    expect(net('530505')).toBe(FEE);
  });

  it('answers the payables metrics equal to the hand calculation', async () => {
    // expenses by ISO week of November (lines on expense accounts, by issue date):
    //   1 Nov rent 450,000,000; 2–8 Nov FEV-1001 50,480,000 + FE-501's installation 54,000,000
    //   (the laptops are assets, 1528); nothing after. October (the compared window): nothing.
    const expenses = await metric({ metric: 'expenses', from: '2026-11-01', to: '2026-11-30', interval: 'week', compare: 'previous_period' });
    expect(expenses.series.map((p: any) => [p.period, p.period_end, p.value])).toEqual([
      ['2026-11-01', '2026-11-01', 450000000], ['2026-11-02', '2026-11-08', 104480000], ['2026-11-09', '2026-11-15', 0],
      ['2026-11-16', '2026-11-22', 0], ['2026-11-23', '2026-11-29', 0], ['2026-11-30', '2026-11-30', 0],
    ]);
    expect(expenses.summary).toMatchObject({ value: 554480000, previous: 0 });

    // ap_outstanding at the end of each week: +506,925,000 (1 Nov); +56,882,883 (5 Nov) and
    // +905,979,360 (6 Nov) = 1,469,787,243; −962,862,243 on 20 Nov = 506,925,000.
    const outstanding = await metric({ metric: 'ap_outstanding', from: '2026-11-01', to: '2026-11-30', interval: 'week' });
    expect(outstanding.series.map((p: any) => p.value)).toEqual([506925000, 1469787243, 1469787243, 506925000, 506925000, 506925000]);
    expect(outstanding.summary.value).toBe(RENT_BILL.amount_due);

    // Aging at 30 Nov: the rent, due 10 Nov, is 20 days late. At 15 Nov: the rent 5 days late;
    // FE-501 (due 18 Nov) and FEV-1001 (due 5 Dec) current: 905,979,360 + 56,882,883 = 962,862,243.
    const aging = await metric({ metric: 'ap_aging', as_of: '2026-11-30' });
    expect(aging.rows).toEqual([
      { bucket: 'current', value: 0 }, { bucket: '1_30', value: 506925000 }, { bucket: '31_60', value: 0 }, { bucket: '61_90', value: 0 }, { bucket: 'over_90', value: 0 },
    ]);
    const mid = await metric({ metric: 'ap_aging', as_of: '2026-11-15' });
    expect(mid.rows).toEqual([
      { bucket: 'current', value: 962862243 }, { bucket: '1_30', value: 506925000 }, { bucket: '31_60', value: 0 }, { bucket: '61_90', value: 0 }, { bucket: 'over_90', value: 0 },
    ]);
    expect(mid.summary.value).toBe(1469787243);

    const status = await metric({ metric: 'bills_status', from: '2026-11-01', to: '2026-11-30' });
    expect(status.rows).toEqual([
      { status: 'draft', count: 0 }, { status: 'posted', count: 1 }, { status: 'partially_paid', count: 0 }, { status: 'paid', count: 2 }, { status: 'void', count: 0 },
    ]);
    expect(status.summary.value).toBe(3);

    // Net bought per vendor: Ñandú 804,000,000; Centro 450,000,000; Valle 50,480,000.
    const top = await metric({ metric: 'top_vendors', from: '2026-11-01', to: '2026-11-30' });
    expect(top.rows).toEqual([
      { vendor_id: ids.nandu, name: 'Tecnología Ñandú SAS', value: 804000000 },
      { vendor_id: ids.centro, name: 'Inmobiliaria Centro Ltda', value: 450000000 },
      { vendor_id: ids.valle, name: SUPPLIER.name, value: 50480000 },
    ]);
    expect(top.summary.value).toBe(804000000 + 450000000 + 50480000);

    // Reconciled: the run 962,862,243 + the fee 2,380,000 = 965,242,243 (2); open: interest 125,000 (1).
    const bank = await metric({ metric: 'bank_reconciliation' });
    expect(bank.rows).toEqual([{
      bank_id: ids.bank, name: 'Corriente Bancolombia', currency: 'COP',
      reconciled_count: 2, reconciled_amount: RUN_TOTAL + FEE, unreconciled_count: 1, unreconciled_amount: INTEREST,
    }]);
    expect(bank.summary.value).toBe(INTEREST);
    // Over the second half of November by week, by the bank's booking dates: 16–22 Nov holds the
    // three lines, of which the interest (21 Nov, 125,000) is open; nothing booked later, nor in
    // the 15 days compared (1–15 Nov, three buckets: 1 Nov, 2–8, 9–15).
    const weeks = await metric({ metric: 'bank_reconciliation', from: '2026-11-16', to: '2026-11-30', interval: 'week', compare: 'previous_period' });
    expect(weeks.series.map((p: any) => [p.period, p.value, p.previous])).toEqual([['2026-11-16', INTEREST, 0], ['2026-11-23', 0, 0], ['2026-11-30', 0, 0]]);
    expect(weeks.summary).toEqual({ value: INTEREST, previous: 0 });
  });

  it('lists each source and the payables lane as the hand count says', async () => {
    const billsAll = await records({ source: 'bills', limit: 10 });
    expect(billsAll.rows.map((r: any) => r.supplier_number).sort()).toEqual(['ARR-11', 'FE-501', FEV]);
    expect((await records({ source: 'bills', status: 'paid' })).rows.map((r: any) => r.id).sort()).toEqual([ids.fevBill, ids.poBill].sort());
    expect((await records({ source: 'bills', search: 'ñandú' })).rows.map((r: any) => [r.supplier_number, r.balance])).toEqual([['FE-501', 0]]);
    expect((await records({ source: 'bills', status: 'posted' })).rows.map((r: any) => [r.supplier_number, r.balance])).toEqual([['ARR-11', 506925000]]);
    expect((await records({ source: 'purchase_orders' })).rows.map((r: any) => [r.id, r.status, r.bill_id, r.total])).toEqual([[ids.po, 'billed', ids.poBill, 1254260000]]);
    expect((await records({ source: 'payment_runs', status: 'confirmed' })).rows.map((r: any) => [r.id, r.count, r.total, r.paid_on])).toEqual([[ids.run, 2, RUN_TOTAL, '2026-11-20']]);
    expect((await records({ source: 'payment_formats' })).rows.map((r: any) => r.id).sort()).toEqual(['bancolombia_pab', 'pain.001.001.03']);
    expect((await sourceRows({ source: 'payment_formats', kind: 'iso20022' })).rows.map((r: any) => r.id)).toEqual(['pain.001.001.03']);
    expect((await records({ source: 'banks' })).rows.map((r: any) => [r.id, r.currency, r.puc_account])).toEqual([[ids.bank, 'COP', '111005']]);
    expect((await records({ source: 'bank_transactions', status: 'reconciled' })).rows).toHaveLength(2);
    expect((await records({ source: 'bank_transactions', status: 'unreconciled' })).rows.map((r: any) => [r.id, r.amount, r.kind])).toEqual([[ids.txInterest, INTEREST, 'credit']]);
    expect((await sourceRows({ source: 'categorization_rules', kind: 'account' })).rows.map((r: any) => [r.kind, r.account_code])).toEqual([['account', '530505']]);
    expect((await sourceRows({ source: 'documents', kind: 'xml', status: 'processed' })).rows.map((r: any) => [r.id, r.bill_id, r.supplier_number])).toEqual([[ids.doc, ids.fevBill, FEV]]);
    expect(await refused('records.list', { source: 'bills', status: 'lost' })).toMatchObject({ status: 422, code: 'invalid_input', field: '/status' });

    // The lane from 1 Nov to 31 Dec: the rent is the only open bill, overdue since 10 Nov.
    const lane = (await graph('query($w: JSON!) { invoicesAgenda(lane: "payables", window: $w) }', { w: { from: '2026-11-01', to: '2026-12-31', limit: 100, overdue: true } })).invoicesAgenda;
    expect(lane.map((e: any) => [e.date, e.amount, e.status, e.ref.bill_id])).toEqual([['2026-11-10', 506925000, 'overdue', ids.rent]]);
  });

  it('a supplier crm does not know: the document keeps it, crm creates it from the document (once), the document then becomes a bill', async () => {
    // Another workspace of the same system, whose crm has no party with the supplier's NIT.
    const ws = await sys.workspace('Segunda Compañía SAS');
    const as = (tool: string, input: unknown) => sys.invoke(tool, input, ws.api_key);
    const up = await as('documents.upload', { name: 'factura-valle.xml', content_type: 'application/xml', content: Buffer.from(attachedDocument('facturacion@valle.co')).toString('base64') });
    const doc = up.body.output.document;
    expect(doc).toMatchObject({ status: 'failed', bill_id: null, supplier_pending: { tax_id: { type: 'NIT', number: SUPPLIER.nit, check_digit: 3 }, name: SUPPLIER.name, email: 'facturacion@valle.co' } });
    expect(doc.reason).toContain('parties.create_from_document');
    // crm makes the party by its own tool path, reading the supplier from the document through the graph.
    const made = await as('parties.create_from_document', { document_id: doc.id });
    expect(made.status).toBe(200);
    expect(made.body.output).toMatchObject({ created: true, party: { kind: 'vendor', name: SUPPLIER.name, email: 'facturacion@valle.co', tax_id: { type: 'NIT', number: SUPPLIER.nit, check_digit: 3 } } });
    // Again: the same party (the NIT is unique in crm), nothing new.
    const again = await as('parties.create_from_document', { document_id: doc.id });
    expect(again.body.output).toEqual({ created: false, party: made.body.output.party });
    expect((await as('parties.create_from_document', { document_id: 'doc_nothere' })).body).toMatchObject({ code: 'not_found' });
    // The first workspace's document is not this workspace's to read.
    expect((await as('parties.create_from_document', { document_id: ids.doc })).body).toMatchObject({ code: 'not_found' });
    const processed = (await as('documents.process', { id: doc.id })).body.output.document;
    expect(processed).toMatchObject({ status: 'processed', supplier_pending: null });
    const bill = (await as('bills.get', { id: processed.bill_id })).body.output.bill;
    expect(bill).toMatchObject({ vendor_id: made.body.output.party.id, supplier_number: FEV, ...FEV_BILL });
    // Processed, the document awaits no supplier any more.
    expect((await as('parties.create_from_document', { document_id: doc.id })).body).toMatchObject({ code: 'not_found' });
    // The party was made through the tool pipeline: on this workspace's ledger, by its owner's key.
    const ledger = (await as('ledger.list', { tool: 'parties.create_from_document' })).body.output.rows;
    expect(ledger.map((e: any) => e.outcome)).toEqual(expect.arrayContaining(['ok']));
    const viewer = await sys.key(ws.workspace_id, 'viewer');
    expect(await refused('parties.create_from_document', { document_id: doc.id }, viewer.api_key)).toMatchObject({ status: 403, code: 'policy_denied' });
  });

  it('seals the workspace and keeps viewers out of payments', async () => {
    const other = await sys.workspace('Otra SAS');
    expect(await refused('bills.get', { id: ids.rent }, other.api_key)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await sys.invoke('records.list', { source: 'bills' }, other.api_key)).body.output.rows).toEqual([]);
    const viewer = await sys.key(workspaceId, 'viewer');
    expect(await refused('payment_runs.create', { currency: 'COP', bank_account: '111005', bill_ids: [ids.rent], debtor: { name: 'x', tax_id: '1', account_number: '1', account_type: 'checking' }, payees: [{ vendor_id: ids.centro, account_number: '1', account_type: 'savings' }] }, viewer.api_key)).toMatchObject({ status: 403, code: 'policy_denied' });
  });
});
