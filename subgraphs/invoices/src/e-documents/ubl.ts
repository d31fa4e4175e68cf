import { createHash } from 'node:crypto';
import { DIAN_PARTY, ID_TYPES, municipality, PARTY_TAX_SCHEMES } from '@cuadra/shared/dian';
import type { CustomerSnapshot, FiscalDocument } from '../lib/fiscal-document.ts';
import { rangeOf, softwareMaker, type SettingsDoc } from '../lib/settings.ts';
import { decimalAmount, decimalQuantity, percentFromPpm } from '../lib/money.ts';
import { documentAmounts, lineParts, type LineAllowanceCharge } from '../lib/line-model.ts';
import { paymentOf } from '../lib/payment.ts';
import { FINAL_CONSUMER_ID } from './cufe.ts';
import { qrContent } from './qr.ts';
import { xmlEscape as x } from './xml.ts';

const NS = [
  'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"',
  'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"',
  'xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"',
  'xmlns:sts="dian:gov:co:facturaelectronica:Structures-2-1"',
].join(' ');

/** DIAN's agency attributes on identifiers it issues (schemeAgencyID 195). */
const DIAN_AGENCY = 'schemeAgencyID="195" schemeAgencyName="CO, DIAN (Dirección de Impuestos y Aduanas Nacionales)"';

/** DIAN withholding tax scheme codes: 06 ReteRenta (retención en la fuente), 05 ReteIVA, 07 ReteICA. */
export const WITHHOLDING_SCHEME = { retefuente: { id: '06', name: 'ReteRenta' }, reteiva: { id: '05', name: 'ReteIVA' }, reteica: { id: '07', name: 'ReteICA' } } as const;

/** DIAN document type of a buyer id (31 NIT, 13 cédula, 22 cédula de extranjería, 41 passport, 42 foreign id). */
export function idScheme(type: string | undefined): string {
  return ID_TYPES[type ?? ''] ?? '13';
}

/** The buyer's id as it enters the CUFE (NumAdq): the number without check digit, or the final-consumer id. */
export function buyerId(doc: Pick<FiscalDocument, 'customer'>): string {
  return doc.customer.tax_id?.number ?? FINAL_CONSUMER_ID;
}

/** SoftwareSecurityCode: SHA-384 of software id + PIN + document number (Anexo Técnico). */
export function softwareSecurityCode(s: Pick<SettingsDoc, 'software_id' | 'software_pin'>, number: string): string {
  return createHash('sha384').update(`${s.software_id}${s.software_pin}${number}`).digest('hex');
}

function money(tag: string, cents: number, currency: string): string {
  return `<cbc:${tag} currencyID="${x(currency)}">${decimalAmount(cents)}</cbc:${tag}>`;
}

/** A percentage with two decimals as DIAN writes them (19.00), from basis points. */
function percentFromBps(bps: number): string {
  return `${Math.trunc(bps / 100)}.${String(bps % 100).padStart(2, '0')}`;
}

const countryNames = new Intl.DisplayNames(['es'], { type: 'region' });

/** A party as DIAN's UBL names it (AccountingSupplierParty / AccountingCustomerParty, and the AttachedDocument's parties). */
export interface DianParty {
  /** AdditionalAccountID (list 13.2.3): 1 persona jurídica, 2 persona natural. */
  person_type: '1' | '2';
  /** PartyName (trade name). */
  name: string;
  /** RegistrationName: the name in the RUT. */
  legal_name: string;
  /** schemeName of CompanyID (list 13.2.1): 31 NIT, 13 cédula… */
  id_type: string;
  id: string;
  check_digit: number | null;
  /** TaxLevelCode (list 13.2.6.1). */
  responsibilities: string[];
  /** TaxScheme (list 13.2.6.2). */
  tax_scheme: string;
  address: { line: string; municipality_code: string | null; postal_code: string | null; country: string } | null;
  email: string | null;
  phone: string | null;
  /** CorporateRegistrationScheme/ID: the issuer's numbering prefix (supplier only). */
  registration_prefix?: string | null;
}

/** The issuer as DIAN's documents name it, from the e-invoicing set-up. */
export function supplierParty(s: Pick<SettingsDoc, 'issuer'>, prefix: string | null): DianParty {
  const i = s.issuer;
  return {
    person_type: i.person_type === 'natural' ? '2' : '1', name: i.name, legal_name: i.legal_name ?? i.name, id_type: '31', id: i.nit, check_digit: i.check_digit,
    responsibilities: i.responsibilities ?? ['R-99-PN'], tax_scheme: i.tax_scheme ?? '01', address: i.address ?? null, email: i.email ?? null, phone: i.phone ?? null,
    registration_prefix: prefix,
  };
}

/**
 * The buyer as DIAN's documents name it, from the document's snapshot of the crm party and its
 * fiscal profile; a party without one is read as DIAN does a buyer it knows nothing more of: a
 * company when identified by NIT, else a person, with no responsibility (R-99-PN) and no tax (ZZ).
 * A buyer without id is the final consumer (222222222222).
 */
export function customerParty(c: CustomerSnapshot): DianParty {
  const f = c.fiscal ?? null;
  const idType = c.tax_id ? idScheme(c.tax_id.type) : '13';
  return {
    person_type: f ? (f.person_type === 'natural' ? '2' : '1') : idType === '31' ? '1' : '2', name: c.name, legal_name: f?.legal_name ?? c.name,
    id_type: idType, id: c.tax_id?.number ?? FINAL_CONSUMER_ID, check_digit: c.tax_id?.check_digit ?? null,
    responsibilities: f?.responsibilities ?? ['R-99-PN'], tax_scheme: f?.tax_scheme ?? 'ZZ', address: f?.address ?? null, email: c.email, phone: c.phone ?? null,
  };
}

/** An address with DANE's codes and DIAN's names (cac:Address or cac:RegistrationAddress). */
function address(tag: 'Address' | 'RegistrationAddress', a: NonNullable<DianParty['address']>): string {
  const m = a.municipality_code ? municipality(a.municipality_code) : null;
  return `<cac:${tag}>${m ? `<cbc:ID>${m.code}</cbc:ID><cbc:CityName>${x(m.name)}</cbc:CityName>` : ''}${a.postal_code ? `<cbc:PostalZone>${x(a.postal_code)}</cbc:PostalZone>` : ''}`
    + `${m ? `<cbc:CountrySubentity>${x(m.department)}</cbc:CountrySubentity><cbc:CountrySubentityCode>${m.department_code}</cbc:CountrySubentityCode>` : ''}`
    + `<cac:AddressLine><cbc:Line>${x(a.line)}</cbc:Line></cac:AddressLine>`
    + `<cac:Country><cbc:IdentificationCode>${x(a.country)}</cbc:IdentificationCode><cbc:Name languageID="es">${x(countryNames.of(a.country) ?? a.country)}</cbc:Name></cac:Country></cac:${tag}>`;
}

/** CompanyID with DIAN's scheme attributes: schemeID is the NIT's check digit, schemeName the id type. */
function companyId(p: Pick<DianParty, 'id' | 'id_type' | 'check_digit'>): string {
  const dv = p.check_digit === null ? '' : ` schemeID="${p.check_digit}"`;
  return `<cbc:CompanyID ${DIAN_AGENCY}${dv} schemeName="${p.id_type}">${x(p.id)}</cbc:CompanyID>`;
}

/** PartyTaxScheme: RUT name, id, fiscal responsibilities (TaxLevelCode), fiscal address, tax (list 13.2.6.2). */
export function partyTaxScheme(p: DianParty): string {
  // listName 48: responsible for IVA; 49: not responsible (Anexo 1.9, TaxLevelCode/@listName).
  const listName = p.tax_scheme === '01' || p.tax_scheme === 'ZA' ? '48' : '49';
  return `<cac:PartyTaxScheme><cbc:RegistrationName>${x(p.legal_name)}</cbc:RegistrationName>${companyId(p)}`
    + `<cbc:TaxLevelCode listName="${listName}">${x(p.responsibilities.join(';'))}</cbc:TaxLevelCode>`
    + (p.address ? address('RegistrationAddress', p.address) : '')
    + `<cac:TaxScheme><cbc:ID>${x(p.tax_scheme)}</cbc:ID><cbc:Name>${x(PARTY_TAX_SCHEMES[p.tax_scheme] ?? p.tax_scheme)}</cbc:Name></cac:TaxScheme></cac:PartyTaxScheme>`;
}

/** A whole party in UBL's order: PartyName, PhysicalLocation, PartyTaxScheme, PartyLegalEntity, Contact. */
function party(role: 'AccountingSupplierParty' | 'AccountingCustomerParty', p: DianParty): string {
  const contact = p.email || p.phone
    ? `<cac:Contact>${p.phone ? `<cbc:Telephone>${x(p.phone)}</cbc:Telephone>` : ''}${p.email ? `<cbc:ElectronicMail>${x(p.email)}</cbc:ElectronicMail>` : ''}</cac:Contact>`
    : '';
  return `<cac:${role}><cbc:AdditionalAccountID>${p.person_type}</cbc:AdditionalAccountID><cac:Party>`
    + `<cac:PartyName><cbc:Name>${x(p.name)}</cbc:Name></cac:PartyName>`
    + (p.address ? `<cac:PhysicalLocation>${address('Address', p.address)}</cac:PhysicalLocation>` : '')
    + partyTaxScheme(p)
    + `<cac:PartyLegalEntity><cbc:RegistrationName>${x(p.legal_name)}</cbc:RegistrationName>${companyId(p)}`
    + (p.registration_prefix ? `<cac:CorporateRegistrationScheme><cbc:ID>${x(p.registration_prefix)}</cbc:ID></cac:CorporateRegistrationScheme>` : '')
    + `</cac:PartyLegalEntity>${contact}</cac:Party></cac:${role}>`;
}

/** One IVA subtotal (cac:TaxSubtotal) of a base at a rate. */
function ivaSubtotal(base: number, tax: number, ratePpm: number, currency: string): string {
  return `<cac:TaxSubtotal>${money('TaxableAmount', base, currency)}${money('TaxAmount', tax, currency)}<cac:TaxCategory><cbc:Percent>${percentFromPpm(ratePpm, 2)}</cbc:Percent><cac:TaxScheme><cbc:ID>01</cbc:ID><cbc:Name>IVA</cbc:Name></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>`;
}

/** The document's IVA by rate (one TaxSubtotal per rate, FAS04), from the lines as posted. */
function taxTotals(lines: FiscalDocument['lines'], currency: string): string {
  const byRate = new Map<number, { base: number; tax: number }>();
  for (const l of lines) {
    const acc = byRate.get(l.tax_rate_ppm) ?? { base: 0, tax: 0 };
    acc.base += l.subtotal;
    acc.tax += l.tax;
    byRate.set(l.tax_rate_ppm, acc);
  }
  const total = [...byRate.values()].reduce((s, r) => s + r.tax, 0);
  return `<cac:TaxTotal>${money('TaxAmount', total, currency)}${[...byRate.entries()].map(([rate, r]) => ivaSubtotal(r.base, r.tax, rate, currency)).join('')}</cac:TaxTotal>`;
}

/**
 * The withholdings the buyer makes (informative, Invoice only: UBL 2.1 has cac:WithholdingTaxTotal
 * on Invoice and its lines, not on CreditNote or DebitNote), one total per tax scheme.
 */
function withholdingTotals(doc: FiscalDocument): string {
  const byType = new Map<string, FiscalDocument['withholdings']>();
  for (const w of doc.withholdings) byType.set(w.type, [...(byType.get(w.type) ?? []), w]);
  return [...byType.entries()].map(([type, ws]) => {
    const scheme = WITHHOLDING_SCHEME[type as keyof typeof WITHHOLDING_SCHEME];
    const subtotals = ws.map((w) => `<cac:TaxSubtotal>${money('TaxableAmount', w.base, doc.currency)}${money('TaxAmount', w.amount, doc.currency)}<cac:TaxCategory><cbc:Percent>${percentFromPpm(w.rate_ppm, 3)}</cbc:Percent><cac:TaxScheme><cbc:ID>${scheme.id}</cbc:ID><cbc:Name>${scheme.name}</cbc:Name></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>`).join('');
    return `<cac:WithholdingTaxTotal>${money('TaxAmount', ws.reduce((s, w) => s + w.amount, 0), doc.currency)}${subtotals}</cac:WithholdingTaxTotal>`;
  }).join('');
}

/** A line's allowance or charge (Anexo 1.9: ID, ChargeIndicator, reason, MultiplierFactorNumeric, Amount, BaseAmount). */
function lineAllowanceCharge(a: LineAllowanceCharge, id: number, currency: string): string {
  return `<cac:AllowanceCharge><cbc:ID>${id}</cbc:ID><cbc:ChargeIndicator>${a.charge}</cbc:ChargeIndicator><cbc:AllowanceChargeReason>${x(a.reason)}</cbc:AllowanceChargeReason>`
    + `<cbc:MultiplierFactorNumeric>${percentFromBps(a.rate_bps)}</cbc:MultiplierFactorNumeric>${money('Amount', a.amount, currency)}${money('BaseAmount', a.base, currency)}</cac:AllowanceCharge>`;
}

/**
 * The document's own allowances and charges. A discount's reason code is DIAN's list 13.3.8 (00:
 * discount not conditioned on anything later); a fixed amount is written as its own base at 100 %,
 * so BaseAmount × MultiplierFactorNumeric is exactly Amount.
 */
function documentAllowanceCharges(doc: FiscalDocument): string {
  return (doc.allowance_charges ?? []).map((a, i) => {
    const pct = a.rate_bps === null ? '100.00' : percentFromBps(a.rate_bps);
    return `<cac:AllowanceCharge><cbc:ID>${i + 1}</cbc:ID><cbc:ChargeIndicator>${a.charge}</cbc:ChargeIndicator>${a.charge ? '' : '<cbc:AllowanceChargeReasonCode>00</cbc:AllowanceChargeReasonCode>'}`
      + `<cbc:AllowanceChargeReason>${x(a.reason)}</cbc:AllowanceChargeReason><cbc:MultiplierFactorNumeric>${pct}</cbc:MultiplierFactorNumeric>`
      + `${money('Amount', a.amount, doc.currency)}${money('BaseAmount', a.base, doc.currency)}</cac:AllowanceCharge>`;
  }).join('');
}

/**
 * What differs between DIAN's three documents in UBL 2.1 (the OASIS schemas decide it): root,
 * customization, profile, line and quantity tags, monetary total; whether the document and its
 * lines take withholdings (Invoice only); where the document's allowances go (a DebitNote has them
 * before PaymentMeans, the others after); and whether a line's allowances precede its TaxTotal
 * (InvoiceLine) or follow it (CreditNoteLine, DebitNoteLine).
 */
const SHAPES = {
  invoice: {
    root: 'Invoice', customization: '10', profile: 'DIAN 2.1: Factura Electrónica de Venta', key: 'CUFE-SHA384', line: 'InvoiceLine', qty: 'InvoicedQuantity', total: 'LegalMonetaryTotal',
    withholdings: true, allowancesBeforePaymentMeans: false, lineAllowancesBeforeTax: true,
  },
  credit_note: {
    root: 'CreditNote', customization: '20', profile: 'DIAN 2.1: Nota Crédito de Factura Electrónica de Venta', key: 'CUDE-SHA384', line: 'CreditNoteLine', qty: 'CreditedQuantity', total: 'LegalMonetaryTotal',
    withholdings: false, allowancesBeforePaymentMeans: false, lineAllowancesBeforeTax: false,
  },
  // DIAN's CustomizationID 30: a debit note that references an invoice. UBL 2.1's DebitNote has no type code and names its total RequestedMonetaryTotal.
  debit_note: {
    root: 'DebitNote', customization: '30', profile: 'DIAN 2.1: Nota Débito de Factura Electrónica de Venta', key: 'CUDE-SHA384', line: 'DebitNoteLine', qty: 'DebitedQuantity', total: 'RequestedMonetaryTotal',
    withholdings: false, allowancesBeforePaymentMeans: true, lineAllowancesBeforeTax: false,
  },
} as const;

/** cac:PaymentMeans: the form (1 cash, 2 credit, with the due date) and the means (list 13.3.4.2). */
function paymentMeans(doc: FiscalDocument, s: SettingsDoc): string {
  const p = paymentOf(doc, s);
  return `<cac:PaymentMeans><cbc:ID>${p.form}</cbc:ID><cbc:PaymentMeansCode>${x(p.means)}</cbc:PaymentMeansCode>${p.form === '2' ? `<cbc:PaymentDueDate>${doc.due_date}</cbc:PaymentDueDate>` : ''}</cac:PaymentMeans>`;
}

/**
 * The UBL 2.1 document DIAN expects (Anexo Técnico 1.9): an `Invoice` (type 01), a `CreditNote`
 * (type 91, with the credited invoice and the concept) or a `DebitNote` (92, CustomizationID 30,
 * with the invoice it adds to and the concept). Amounts come from the line model
 * (lib/line-model.ts): each line's discount and charges as its cac:AllowanceCharge, the
 * document's own allowances and charges, LineExtensionAmount = Σ lines, TaxInclusiveAmount =
 * lines + taxes, PayableAmount = TaxInclusiveAmount − allowances + charges. Built by string
 * templating, every value escaped. `referenced` is the invoice a note names.
 */
export function renderUbl(doc: FiscalDocument, s: SettingsDoc, referenced?: FiscalDocument | null): string {
  if (!doc.number || !doc.cufe || !doc.issue_time) throw new Error('Only a posted document has a UBL form.');
  const shape = SHAPES[doc.kind];
  const isCredit = doc.kind === 'credit_note';
  const isNote = doc.kind !== 'invoice';
  const root = shape.root;
  const range = rangeOf(s.numbering, doc.kind);
  const maker = softwareMaker(s);
  const amounts = documentAmounts(doc.lines, doc.allowance_charges ?? []);
  // Only an invoice numbers from a range DIAN authorised (sts:InvoiceControl); notes have none.
  const control = doc.kind === 'invoice'
    ? `<sts:InvoiceControl><sts:InvoiceAuthorization>${x(range.resolution ?? '')}</sts:InvoiceAuthorization>`
      + (range.valid_from && range.valid_to ? `<sts:AuthorizationPeriod><cbc:StartDate>${range.valid_from}</cbc:StartDate><cbc:EndDate>${range.valid_to}</cbc:EndDate></sts:AuthorizationPeriod>` : '')
      + `<sts:AuthorizedInvoices><sts:Prefix>${x(range.prefix)}</sts:Prefix><sts:From>${range.from}</sts:From><sts:To>${range.to}</sts:To></sts:AuthorizedInvoices></sts:InvoiceControl>`
    : '';
  const parts: string[] = [
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
    `<${root} xmlns="urn:oasis:names:specification:ubl:schema:xsd:${root}-2" ${NS}>`,
    '<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent><sts:DianExtensions>',
    control,
    '<sts:InvoiceSource><cbc:IdentificationCode listAgencyID="6" listAgencyName="United Nations Economic Commission for Europe" listSchemeURI="urn:oasis:names:specification:ubl:codelist:gc:CountryIdentificationCode-2.1">CO</cbc:IdentificationCode></sts:InvoiceSource>',
    `<sts:SoftwareProvider><sts:ProviderID ${DIAN_AGENCY} schemeID="${maker.check_digit}" schemeName="31">${x(maker.nit)}</sts:ProviderID><sts:SoftwareID ${DIAN_AGENCY}>${x(s.software_id)}</sts:SoftwareID></sts:SoftwareProvider>`,
    `<sts:SoftwareSecurityCode ${DIAN_AGENCY}>${softwareSecurityCode(s, doc.number)}</sts:SoftwareSecurityCode>`,
    `<sts:AuthorizationProvider><sts:AuthorizationProviderID ${DIAN_AGENCY} schemeID="${DIAN_PARTY.check_digit}" schemeName="31">${DIAN_PARTY.nit}</sts:AuthorizationProviderID></sts:AuthorizationProvider>`,
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
    party('AccountingSupplierParty', supplierParty(s, doc.kind === 'invoice' ? range.prefix : null)),
    party('AccountingCustomerParty', customerParty(doc.customer)),
  );
  const allowances = documentAllowanceCharges(doc);
  if (shape.allowancesBeforePaymentMeans) parts.push(allowances, paymentMeans(doc, s));
  else parts.push(paymentMeans(doc, s), allowances);
  parts.push(taxTotals(doc.lines, doc.currency), shape.withholdings ? withholdingTotals(doc) : '');
  const lineExtension = amounts.line_extension;
  parts.push(
    `<cac:${shape.total}>${money('LineExtensionAmount', lineExtension, doc.currency)}${money('TaxExclusiveAmount', lineExtension, doc.currency)}`
      + `${money('TaxInclusiveAmount', lineExtension + amounts.tax_total, doc.currency)}`
      + (amounts.allowance_total ? money('AllowanceTotalAmount', amounts.allowance_total, doc.currency) : '')
      + (amounts.charge_total ? money('ChargeTotalAmount', amounts.charge_total, doc.currency) : '')
      + `${money('PayableAmount', amounts.payable, doc.currency)}</cac:${shape.total}>`,
  );
  doc.lines.forEach((l, index) => {
    const { allowance_charges } = lineParts(l);
    const acs = allowance_charges.map((a, i) => lineAllowanceCharge(a, i + 1, doc.currency)).join('');
    const tax = `<cac:TaxTotal>${money('TaxAmount', l.tax, doc.currency)}${ivaSubtotal(l.subtotal, l.tax, l.tax_rate_ppm, doc.currency)}</cac:TaxTotal>`;
    parts.push(
      `<cac:${shape.line}><cbc:ID>${index + 1}</cbc:ID><cbc:${shape.qty} unitCode="${x(l.unit)}">${decimalQuantity(l.quantity)}</cbc:${shape.qty}>${money('LineExtensionAmount', l.subtotal, doc.currency)}`,
      shape.lineAllowancesBeforeTax ? `${acs}${tax}` : `${tax}${acs}`,
      `<cac:Item><cbc:Description>${x(l.description)}</cbc:Description></cac:Item><cac:Price>${money('PriceAmount', l.unit_price, doc.currency)}<cbc:BaseQuantity unitCode="${x(l.unit)}">1</cbc:BaseQuantity></cac:Price></cac:${shape.line}>`,
    );
  });
  parts.push(`</${root}>`);
  return parts.join('');
}
