import { createHash } from 'node:crypto';
import type { InvoiceDoc } from '../modules/invoices/model.ts';
import { rangeOf, type SettingsDoc } from '../lib/settings.ts';
import { decimalAmount, decimalQuantity, percentFromPpm } from '../lib/money.ts';
import { FINAL_CONSUMER_ID } from './cufe.ts';
import { qrContent } from './qr.ts';
import { xmlEscape as x } from './xml.ts';

const NS = [
  'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"',
  'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"',
  'xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"',
  'xmlns:sts="dian:gov:co:facturaelectronica:Structures-2-1"',
].join(' ');

/** DIAN withholding tax scheme codes: 06 ReteRenta (retención en la fuente), 05 ReteIVA, 07 ReteICA. */
export const WITHHOLDING_SCHEME = { retefuente: { id: '06', name: 'ReteRenta' }, reteiva: { id: '05', name: 'ReteIVA' }, reteica: { id: '07', name: 'ReteICA' } } as const;

/** DIAN document type of a buyer id (31 NIT, 13 cédula, 22 cédula de extranjería, 41 passport, 42 foreign id). */
function idScheme(type: string | undefined): string {
  return ({ NIT: '31', CC: '13', CE: '22', PASSPORT: '41', FOREIGN: '42' } as Record<string, string>)[type ?? ''] ?? '13';
}

/** The buyer's id as it enters the CUFE (NumAdq): the number without check digit, or the final-consumer id. */
export function buyerId(doc: Pick<InvoiceDoc, 'customer'>): string {
  return doc.customer.tax_id?.number ?? FINAL_CONSUMER_ID;
}

/** SoftwareSecurityCode: SHA-384 of software id + PIN + document number (Anexo Técnico). */
export function softwareSecurityCode(s: Pick<SettingsDoc, 'software_id' | 'software_pin'>, number: string): string {
  return createHash('sha384').update(`${s.software_id}${s.software_pin}${number}`).digest('hex');
}

function percent(ppm: number): string {
  return percentFromPpm(ppm, 2);
}

function money(tag: string, cents: number, currency: string): string {
  return `<cbc:${tag} currencyID="${x(currency)}">${decimalAmount(cents)}</cbc:${tag}>`;
}

function taxTotals(lines: InvoiceDoc['lines'], currency: string): string {
  const byRate = new Map<number, { base: number; tax: number }>();
  for (const l of lines) {
    const acc = byRate.get(l.tax_rate_ppm) ?? { base: 0, tax: 0 };
    acc.base += l.subtotal;
    acc.tax += l.tax;
    byRate.set(l.tax_rate_ppm, acc);
  }
  const total = [...byRate.values()].reduce((s, r) => s + r.tax, 0);
  const subtotals = [...byRate.entries()].map(([rate, r]) =>
    `<cac:TaxSubtotal>${money('TaxableAmount', r.base, currency)}${money('TaxAmount', r.tax, currency)}<cac:TaxCategory><cbc:Percent>${percent(rate)}</cbc:Percent><cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>`).join('');
  return `<cac:TaxTotal>${money('TaxAmount', total, currency)}${subtotals}</cac:TaxTotal>`;
}

function withholdingTotals(doc: InvoiceDoc): string {
  const byType = new Map<string, InvoiceDoc['withholdings']>();
  for (const w of doc.withholdings) byType.set(w.type, [...(byType.get(w.type) ?? []), w]);
  return [...byType.entries()].map(([type, ws]) => {
    const scheme = WITHHOLDING_SCHEME[type as keyof typeof WITHHOLDING_SCHEME];
    const subtotals = ws.map((w) => `<cac:TaxSubtotal>${money('TaxableAmount', w.base, doc.currency)}${money('TaxAmount', w.amount, doc.currency)}<cac:TaxCategory><cbc:Percent>${percentFromPpm(w.rate_ppm, 3)}</cbc:Percent><cac:TaxScheme><cbc:ID>${scheme.id}</cbc:ID><cbc:Name>${scheme.name}</cbc:Name></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>`).join('');
    return `<cac:WithholdingTaxTotal>${money('TaxAmount', ws.reduce((s, w) => s + w.amount, 0), doc.currency)}${subtotals}</cac:WithholdingTaxTotal>`;
  }).join('');
}

function party(role: 'AccountingSupplierParty' | 'AccountingCustomerParty', name: string, idType: string, id: string, checkDigit: number | null): string {
  const dv = checkDigit === null ? '' : ` schemeID="${checkDigit}"`;
  return `<cac:${role}><cbc:AdditionalAccountID>${idType === '31' ? '1' : '2'}</cbc:AdditionalAccountID><cac:Party><cac:PartyName><cbc:Name>${x(name)}</cbc:Name></cac:PartyName>`
    + `<cac:PartyTaxScheme><cbc:RegistrationName>${x(name)}</cbc:RegistrationName><cbc:CompanyID schemeAgencyID="195"${dv} schemeName="${idType}">${x(id)}</cbc:CompanyID>`
    + `<cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:PartyTaxScheme></cac:Party></cac:${role}>`;
}

/** What differs between DIAN's three documents in UBL: root, customization, profile, line and quantity tags, monetary total. */
const SHAPES = {
  invoice: { root: 'Invoice', customization: '10', profile: 'DIAN 2.1: Factura Electrónica de Venta', key: 'CUFE-SHA384', line: 'InvoiceLine', qty: 'InvoicedQuantity', total: 'LegalMonetaryTotal' },
  credit_note: { root: 'CreditNote', customization: '20', profile: 'DIAN 2.1: Nota Crédito de Factura Electrónica de Venta', key: 'CUDE-SHA384', line: 'CreditNoteLine', qty: 'CreditedQuantity', total: 'LegalMonetaryTotal' },
  // DIAN's CustomizationID 30: a debit note that references an invoice. UBL 2.1's DebitNote has no type code, no
  // withholding totals, and names its total RequestedMonetaryTotal.
  debit_note: { root: 'DebitNote', customization: '30', profile: 'DIAN 2.1: Nota Débito de Factura Electrónica de Venta', key: 'CUDE-SHA384', line: 'DebitNoteLine', qty: 'DebitedQuantity', total: 'RequestedMonetaryTotal' },
} as const;

/**
 * The UBL 2.1 document DIAN expects (Anexo Técnico 1.9): an `Invoice` (type 01), a `CreditNote`
 * (type 91, with the credited invoice and the concept) or a `DebitNote` (92, CustomizationID 30,
 * with the invoice it adds to and the concept). Built by string templating, every value escaped.
 * `referenced` is the invoice a note names.
 */
export function renderUbl(doc: InvoiceDoc, s: SettingsDoc, referenced?: InvoiceDoc | null): string {
  if (!doc.number || !doc.cufe || !doc.issue_time) throw new Error('Only a posted document has a UBL form.');
  const shape = SHAPES[doc.kind];
  const isCredit = doc.kind === 'credit_note';
  const isNote = doc.kind !== 'invoice';
  const root = shape.root;
  const range = rangeOf(s.numbering, doc.kind);
  const lineTag = shape.line;
  const qtyTag = shape.qty;
  const buyer = doc.customer;
  const parts: string[] = [
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
    `<${root} xmlns="urn:oasis:names:specification:ubl:schema:xsd:${root}-2" ${NS}>`,
    '<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent><sts:DianExtensions>',
    `<sts:InvoiceControl><sts:InvoiceAuthorization>${x(range.resolution ?? '')}</sts:InvoiceAuthorization><sts:AuthorizedInvoices><sts:Prefix>${x(range.prefix)}</sts:Prefix><sts:From>${range.from}</sts:From><sts:To>${range.to}</sts:To></sts:AuthorizedInvoices></sts:InvoiceControl>`,
    `<sts:SoftwareProvider><sts:ProviderID schemeAgencyID="195" schemeID="${s.issuer.check_digit}" schemeName="31">${x(s.issuer.nit)}</sts:ProviderID><sts:SoftwareID>${x(s.software_id)}</sts:SoftwareID></sts:SoftwareProvider>`,
    `<sts:SoftwareSecurityCode>${softwareSecurityCode(s, doc.number)}</sts:SoftwareSecurityCode>`,
    `<sts:QRCode>${x(qrContent(doc, s))}</sts:QRCode>`,
    '</sts:DianExtensions></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>',
    '<cbc:UBLVersionID>UBL 2.1</cbc:UBLVersionID>',
    `<cbc:CustomizationID>${shape.customization}</cbc:CustomizationID>`,
    `<cbc:ProfileID>${shape.profile}</cbc:ProfileID>`,
    `<cbc:ProfileExecutionID>${s.environment}</cbc:ProfileExecutionID>`,
    `<cbc:ID>${x(doc.number)}</cbc:ID>`,
    `<cbc:UUID schemeID="${s.environment}" schemeName="${shape.key}">${doc.cufe}</cbc:UUID>`,
    `<cbc:IssueDate>${doc.issue_date}</cbc:IssueDate>`,
    `<cbc:IssueTime>${x(doc.issue_time)}</cbc:IssueTime>`,
    doc.kind === 'invoice' ? `<cbc:DueDate>${doc.due_date}</cbc:DueDate><cbc:InvoiceTypeCode>01</cbc:InvoiceTypeCode>` : isCredit ? '<cbc:CreditNoteTypeCode>91</cbc:CreditNoteTypeCode>' : '',
    doc.notes ? `<cbc:Note>${x(doc.notes)}</cbc:Note>` : '',
    `<cbc:DocumentCurrencyCode>${x(doc.currency)}</cbc:DocumentCurrencyCode>`,
    `<cbc:LineCountNumeric>${doc.lines.length}</cbc:LineCountNumeric>`,
  ];
  if (isNote && referenced) {
    parts.push(
      `<cac:DiscrepancyResponse><cbc:ReferenceID>${x(referenced.number ?? '')}</cbc:ReferenceID><cbc:ResponseCode>${doc.concept}</cbc:ResponseCode><cbc:Description>${x(doc.notes ?? '')}</cbc:Description></cac:DiscrepancyResponse>`,
      `<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>${x(referenced.number ?? '')}</cbc:ID><cbc:UUID schemeName="CUFE-SHA384">${referenced.cufe ?? ''}</cbc:UUID><cbc:IssueDate>${referenced.issue_date}</cbc:IssueDate></cac:InvoiceDocumentReference></cac:BillingReference>`,
    );
  }
  parts.push(
    party('AccountingSupplierParty', s.issuer.name, '31', s.issuer.nit, s.issuer.check_digit),
    party('AccountingCustomerParty', buyer.name, buyer.tax_id ? idScheme(buyer.tax_id.type) : '13', buyerId(doc), buyer.tax_id?.check_digit ?? null),
    taxTotals(doc.lines, doc.currency),
    doc.kind === 'debit_note' ? '' : withholdingTotals(doc),
    `<cac:${shape.total}>${money('LineExtensionAmount', doc.subtotal, doc.currency)}${money('TaxExclusiveAmount', doc.subtotal, doc.currency)}${money('TaxInclusiveAmount', doc.total, doc.currency)}${money('PayableAmount', doc.total, doc.currency)}</cac:${shape.total}>`,
  );
  doc.lines.forEach((l, index) => {
    parts.push(
      `<cac:${lineTag}><cbc:ID>${index + 1}</cbc:ID><cbc:${qtyTag} unitCode="${x(l.unit)}">${decimalQuantity(l.quantity)}</cbc:${qtyTag}>${money('LineExtensionAmount', l.subtotal, doc.currency)}`,
      `<cac:TaxTotal>${money('TaxAmount', l.tax, doc.currency)}<cac:TaxSubtotal>${money('TaxableAmount', l.subtotal, doc.currency)}${money('TaxAmount', l.tax, doc.currency)}<cac:TaxCategory><cbc:Percent>${percent(l.tax_rate_ppm)}</cbc:Percent><cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal></cac:TaxTotal>`,
      `<cac:Item><cbc:Description>${x(l.description)}</cbc:Description></cac:Item><cac:Price>${money('PriceAmount', l.unit_price, doc.currency)}<cbc:BaseQuantity unitCode="${x(l.unit)}">1</cbc:BaseQuantity></cac:Price></cac:${lineTag}>`,
    );
  });
  parts.push(`</${root}>`);
  return parts.join('');
}
