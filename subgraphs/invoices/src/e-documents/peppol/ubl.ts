import { CuadraError } from '@cuadra/shared';
import type { FiscalDocument } from '../../lib/fiscal-document.ts';
import { decimalAmount, decimalQuantity, percentFromPpm } from '../../lib/money.ts';
import { documentAmounts, lineParts, type DocumentAllowanceCharge, type LineAllowanceCharge } from '../../lib/line-model.ts';
import { DEFAULT_EXEMPTION, type LineVat, type VatCategory } from '../../lib/tax-regime.ts';
import { xmlEscape as x } from '../xml.ts';
import type { PeppolAddress, PeppolEndpoint, PeppolSettingsDoc } from './settings.ts';

export { DEFAULT_EXEMPTION, type LineVat };

/** Specification identifier (BT-24) of Peppol BIS Billing 3.0. */
export const PEPPOL_CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
/** Business process (BT-23) of Peppol BIS Billing 3.0. */
export const PEPPOL_PROFILE_ID = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

/** The buyer as the Peppol document names it (BG-7). */
export interface PeppolBuyer {
  name: string;
  endpoint: PeppolEndpoint;
  /** Buyer VAT identifier with its country prefix (BT-48). */
  vat_id: string | null;
  /** Buyer legal registration identifier (BT-47). */
  legal_id: string | null;
  address: PeppolAddress;
  email: string | null;
}

/** One row of the VAT breakdown (BG-23), amounts in minor units. */
export interface VatBreakdownRow {
  category: VatCategory;
  rate_ppm: number;
  taxable: number;
  tax: number;
  reason_code: string | null;
  reason: string | null;
}

/** Document totals (BG-22) in minor units. */
export interface PeppolTotals {
  line_extension: number;
  tax_exclusive: number;
  tax: number;
  tax_inclusive: number;
  payable: number;
}

export interface PeppolOptions {
  buyer: PeppolBuyer;
  /** Buyer reference (BT-10); Peppol requires it or an order reference. */
  buyer_reference: string;
  /** One entry per line of the document, in order. */
  line_vat: LineVat[];
  /** Credit notes: the invoice credited (BG-3). */
  credited?: { number: string; issue_date: string } | null;
  /** Where the refusals point (`/vat` of the tool's input). */
  vatField?: string;
}

const NS = [
  'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"',
  'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"',
].join(' ');

function el(tag: string, value: string | null | undefined, attrs = ''): string {
  // Peppol forbids empty elements (PEPPOL-EN16931-R008): an absent value leaves the element out.
  return value === null || value === undefined || value === '' ? '' : `<${tag}${attrs}>${x(value)}</${tag}>`;
}

function amount(tag: string, cents: number, currency: string): string {
  return `<cbc:${tag} currencyID="${x(currency)}">${decimalAmount(cents)}</cbc:${tag}>`;
}

function address(a: PeppolAddress): string {
  return `<cac:PostalAddress>${el('cbc:StreetName', a.street)}${el('cbc:CityName', a.city)}${el('cbc:PostalZone', a.postal_code)}`
    + `<cac:Country><cbc:IdentificationCode>${x(a.country)}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>`;
}

function party(role: 'AccountingSupplierParty' | 'AccountingCustomerParty', p: {
  name: string; trading_name?: string | null; endpoint: PeppolEndpoint; vat_id: string | null; legal_id: string | null; address: PeppolAddress; email: string | null;
}): string {
  return `<cac:${role}><cac:Party>`
    + `<cbc:EndpointID schemeID="${x(p.endpoint.scheme)}">${x(p.endpoint.id)}</cbc:EndpointID>`
    + (p.trading_name ? `<cac:PartyName><cbc:Name>${x(p.trading_name)}</cbc:Name></cac:PartyName>` : '')
    + address(p.address)
    + (p.vat_id ? `<cac:PartyTaxScheme><cbc:CompanyID>${x(p.vat_id)}</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>` : '')
    + `<cac:PartyLegalEntity><cbc:RegistrationName>${x(p.name)}</cbc:RegistrationName>${el('cbc:CompanyID', p.legal_id)}</cac:PartyLegalEntity>`
    + (p.email ? `<cac:Contact><cbc:ElectronicMail>${x(p.email)}</cbc:ElectronicMail></cac:Contact>` : '')
    + `</cac:Party></cac:${role}>`;
}

function taxCategory(tag: 'TaxCategory' | 'ClassifiedTaxCategory', v: { category: VatCategory; rate_ppm: number; reason_code?: string | null; reason?: string | null }): string {
  // Category O carries no rate (BR-O-05/BR-O-09); the others carry theirs, 0 for Z, E, AE, K and G.
  const percent = v.category === 'O' ? '' : `<cbc:Percent>${percentFromPpm(v.rate_ppm, 2)}</cbc:Percent>`;
  return `<cac:${tag}><cbc:ID>${v.category}</cbc:ID>${percent}${el('cbc:TaxExemptionReasonCode', v.reason_code)}${el('cbc:TaxExemptionReason', v.reason)}`
    + `<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:${tag}>`;
}

/** A percentage with two decimals, from basis points. */
function percentFromBps(bps: number): string {
  return `${Math.trunc(bps / 100)}.${String(bps % 100).padStart(2, '0')}`;
}

/** A line's allowance (BG-27: reason code UNCL5189, 95 discount) or charge (BG-28: UNCL7161), with its percentage of the gross amount. */
function lineAllowanceCharge(a: LineAllowanceCharge, cur: string): string {
  return `<cac:AllowanceCharge><cbc:ChargeIndicator>${a.charge}</cbc:ChargeIndicator>${el('cbc:AllowanceChargeReasonCode', a.reason_code)}${el('cbc:AllowanceChargeReason', a.reason)}`
    + `<cbc:MultiplierFactorNumeric>${percentFromBps(a.rate_bps)}</cbc:MultiplierFactorNumeric>${amount('Amount', a.amount, cur)}${amount('BaseAmount', a.base, cur)}</cac:AllowanceCharge>`;
}

/** The VAT category of a document allowance or charge: the one kept on it, else S at its rate or Z. */
function acVat(a: DocumentAllowanceCharge): LineVat {
  return a.vat ?? { category: a.tax_rate_ppm > 0 ? 'S' : 'Z', reason_code: null, reason: null };
}

/** A document allowance (BG-20) or charge (BG-21), with its VAT category (BT-95/BT-102). */
function documentAllowanceCharge(a: DocumentAllowanceCharge, cur: string): string {
  const pct = a.rate_bps !== null ? `<cbc:MultiplierFactorNumeric>${percentFromBps(a.rate_bps)}</cbc:MultiplierFactorNumeric>` : '';
  const base = a.rate_bps !== null ? amount('BaseAmount', a.base, cur) : '';
  return `<cac:AllowanceCharge><cbc:ChargeIndicator>${a.charge}</cbc:ChargeIndicator>${el('cbc:AllowanceChargeReasonCode', a.reason_code)}${el('cbc:AllowanceChargeReason', a.reason)}`
    + `${pct}${amount('Amount', a.amount, cur)}${base}${taxCategory('TaxCategory', { category: acVat(a).category, rate_ppm: a.tax_rate_ppm })}</cac:AllowanceCharge>`;
}

/**
 * Checks the lines' VAT categories against their rates and EN 16931's category rules, and
 * groups them into the VAT breakdown (BG-23). Line net amounts are already rounded to the
 * cent when the invoice is written (lineAmounts), so each row's taxable amount is an exact sum
 * of rounded line amounts (BR-S-08 … BR-O-08). Each row's VAT is the sum of the VAT posted
 * per line, so the Peppol document carries exactly the amounts posted and journalled; EN 16931
 * accepts it when it lies within one currency unit of taxable × rate rounded (BR-CO-17),
 * which is checked here rather than left to the receiver.
 */
export function vatBreakdown(doc: Pick<FiscalDocument, 'lines' | 'currency' | 'allowance_charges'>, lineVat: LineVat[], field = '/vat'): VatBreakdownRow[] {
  if (lineVat.length !== doc.lines.length) throw new Error('one VAT category per line');
  const rows = new Map<string, VatBreakdownRow>();
  doc.lines.forEach((l, i) => {
    const v = lineVat[i];
    const at = `${field}/${i}`;
    if (v.category === 'S' && l.tax_rate_ppm === 0) {
      throw new CuadraError('invalid_input', `Line ${i + 1} has no VAT: standard rate (S) needs a rate above 0; name Z, E, AE, K, G or O.`, { field: `${at}/category` });
    }
    if (v.category !== 'S' && l.tax_rate_ppm !== 0) {
      throw new CuadraError('invalid_input', `Line ${i + 1} charges VAT at ${percentFromPpm(l.tax_rate_ppm)} %: only category S carries a rate.`, { field: `${at}/category` });
    }
    if ((v.category === 'S' || v.category === 'Z') && (v.reason || v.reason_code)) {
      throw new CuadraError('invalid_input', `Category ${v.category} takes no exemption reason (BR-${v.category}-10).`, { field: `${at}/reason` });
    }
    if (v.category !== 'S' && v.category !== 'Z' && !v.reason && !v.reason_code) {
      throw new CuadraError('invalid_input', `Category ${v.category} needs an exemption reason or reason code (BR-${v.category}-10), e.g. VATEX-EU-132.`, { field: `${at}/reason` });
    }
    const key = `${v.category}:${l.tax_rate_ppm}:${v.reason_code ?? ''}:${v.reason ?? ''}`;
    const sameCategory = [...rows.values()].find((r) => r.category === v.category && r.rate_ppm === l.tax_rate_ppm);
    if (sameCategory && (sameCategory.reason_code !== v.reason_code || sameCategory.reason !== v.reason)) {
      // One breakdown row per category and rate, so one exemption reason each (BR-E-10 …).
      throw new CuadraError('invalid_input', `Lines of category ${v.category} must share one exemption reason.`, { field: `${at}/reason` });
    }
    const row = rows.get(key) ?? { category: v.category, rate_ppm: l.tax_rate_ppm, taxable: 0, tax: 0, reason_code: v.reason_code, reason: v.reason };
    row.taxable += l.subtotal;
    row.tax += l.tax;
    rows.set(key, row);
  });
  // The document's own allowances and charges are in the breakdown of their category (BR-CO-18): a charge adds to its base and VAT, an allowance takes off.
  (doc.allowance_charges ?? []).forEach((a, i) => {
    const v = acVat(a);
    const key = `${v.category}:${a.tax_rate_ppm}:${v.reason_code ?? ''}:${v.reason ?? ''}`;
    const row = rows.get(key) ?? [...rows.values()].find((r) => r.category === v.category && r.rate_ppm === a.tax_rate_ppm);
    if (row && (row.reason_code !== v.reason_code || row.reason !== v.reason)) {
      throw new CuadraError('invalid_input', `Allowance or charge ${i + 1} is of category ${v.category} with another exemption reason than the lines of that category.`, { field: `/allowance_charges/${i}` });
    }
    const target = row ?? { category: v.category, rate_ppm: a.tax_rate_ppm, taxable: 0, tax: 0, reason_code: v.reason_code, reason: v.reason };
    target.taxable += a.charge ? a.amount : -a.amount;
    target.tax += a.charge ? a.tax : -a.tax;
    rows.set(`${target.category}:${target.rate_ppm}:${target.reason_code ?? ''}:${target.reason ?? ''}`, target);
  });
  const list = [...rows.values()];
  if (list.some((r) => r.category === 'O') && list.length > 1) {
    // BR-O-11 … BR-O-14: "not subject to VAT" cannot be mixed with any other category.
    throw new CuadraError('invalid_input', 'Category O (not subject to VAT) cannot be mixed with other categories on one document.', { field });
  }
  for (const r of list) {
    // BR-CO-17: the row's VAT within one currency unit of taxable × rate, rounded to the cent.
    const exact = Number((BigInt(r.taxable) * BigInt(r.rate_ppm) * 2n + 1_000_000n) / 2_000_000n);
    if (Math.abs(r.tax - exact) >= 100) {
      throw new CuadraError('conflict', `The VAT posted at ${percentFromPpm(r.rate_ppm)} % (${decimalAmount(r.tax)}) is more than one unit away from the rate on the taxable amount (${decimalAmount(exact)}); EN 16931 refuses it (BR-CO-17).`, { field });
    }
  }
  return list;
}

/**
 * The Peppol BIS Billing 3.0 document of a posted invoice (UBL 2.1 `Invoice`, type 380) or credit
 * note (`CreditNote`, type 381), per EN 16931 and the OpenPEPPOL rules. Amounts are those posted:
 * line net amounts in cents, their sum the line total (BR-CO-10), the VAT breakdown per category
 * and rate ({@link vatBreakdown}), total VAT the sum of its rows (BR-CO-14), and the amount due
 * the total with VAT (BR-CO-15, BR-CO-16). A line discount becomes a line allowance (reason 95)
 * so that quantity × price − allowance gives the line amount (PEPPOL-EN16931-R120).
 * Built by string templating, every value escaped.
 */
export function renderPeppol(doc: FiscalDocument, seller: PeppolSettingsDoc, opts: PeppolOptions): { xml: string; totals: PeppolTotals; breakdown: VatBreakdownRow[] } {
  if (!doc.number || doc.status === 'draft') throw new CuadraError('conflict', 'Only a posted invoice or credit note has a Peppol document.');
  if (doc.withholdings.length > 0) {
    throw new CuadraError('conflict', 'This document carries Colombian withholdings, which EN 16931 has no place for; it is not a Peppol document.');
  }
  const isCredit = doc.kind === 'credit_note';
  const cur = doc.currency;
  const breakdown = vatBreakdown(doc, opts.line_vat, opts.vatField);
  const categories = new Set(breakdown.map((r) => r.category));
  const onlyO = categories.size === 1 && categories.has('O');
  if (!onlyO && !seller.vat_id) {
    throw new CuadraError('conflict', 'The seller has no VAT identifier in the Peppol settings; every category but O needs one (BR-S-02 …).', { field: opts.vatField ?? '/vat' });
  }
  if ((categories.has('AE') || categories.has('K')) && !opts.buyer.vat_id) {
    throw new CuadraError('invalid_input', 'Reverse charge (AE) and intra-community supply (K) need the buyer\'s VAT identifier (BR-AE-03, BR-K-03).', { field: '/buyer/vat_id' });
  }
  // Category O: neither party's VAT identifier appears (BR-O-02, BR-O-03, BR-O-04).
  const sellerVat = onlyO ? null : seller.vat_id;
  const buyerVat = onlyO ? null : opts.buyer.vat_id;

  // The line model's totals (lib/line-model.ts): the same amounts the DIAN document and the journal carry.
  const amounts = documentAmounts(doc.lines, doc.allowance_charges ?? []);
  const tax = breakdown.reduce((s, r) => s + r.tax, 0);
  const taxExclusive = amounts.line_extension - amounts.allowance_total + amounts.charge_total;
  const totals: PeppolTotals = { line_extension: amounts.line_extension, tax_exclusive: taxExclusive, tax, tax_inclusive: taxExclusive + tax, payable: taxExclusive + tax };
  if (totals.payable !== doc.total || tax !== amounts.tax_total) throw new Error(`Peppol total ${totals.payable} differs from the posted total ${doc.total}`);

  const root = isCredit ? 'CreditNote' : 'Invoice';
  const parts: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<${root} xmlns="urn:oasis:names:specification:ubl:schema:xsd:${root}-2" ${NS}>`,
    `<cbc:CustomizationID>${PEPPOL_CUSTOMIZATION_ID}</cbc:CustomizationID>`,
    `<cbc:ProfileID>${PEPPOL_PROFILE_ID}</cbc:ProfileID>`,
    `<cbc:ID>${x(doc.number)}</cbc:ID>`,
    `<cbc:IssueDate>${doc.issue_date}</cbc:IssueDate>`,
    isCredit ? '<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>' : `<cbc:DueDate>${doc.due_date}</cbc:DueDate><cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>`,
    el('cbc:Note', doc.notes),
    `<cbc:DocumentCurrencyCode>${x(cur)}</cbc:DocumentCurrencyCode>`,
    el('cbc:BuyerReference', opts.buyer_reference),
  ];
  if (isCredit && opts.credited) {
    parts.push(`<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>${x(opts.credited.number)}</cbc:ID><cbc:IssueDate>${opts.credited.issue_date}</cbc:IssueDate></cac:InvoiceDocumentReference></cac:BillingReference>`);
  }
  parts.push(
    party('AccountingSupplierParty', { ...seller, vat_id: sellerVat, address: seller.address }),
    party('AccountingCustomerParty', { ...opts.buyer, vat_id: buyerVat }),
  );
  if (categories.has('K')) {
    // Intra-community supply: the delivery date and the country delivered to (BR-IC-11, BR-IC-12).
    parts.push(`<cac:Delivery><cbc:ActualDeliveryDate>${doc.issue_date}</cbc:ActualDeliveryDate><cac:DeliveryLocation><cac:Address><cac:Country><cbc:IdentificationCode>${x(opts.buyer.address.country)}</cbc:IdentificationCode></cac:Country></cac:Address></cac:DeliveryLocation></cac:Delivery>`);
  }
  if (!isCredit && seller.payment) {
    const p = seller.payment;
    parts.push(
      `<cac:PaymentMeans><cbc:PaymentMeansCode>${x(p.means_code)}</cbc:PaymentMeansCode><cbc:PaymentID>${x(doc.number)}</cbc:PaymentID>`
        + `<cac:PayeeFinancialAccount><cbc:ID>${x(p.iban)}</cbc:ID>${el('cbc:Name', p.account_name)}`
        + (p.bic ? `<cac:FinancialInstitutionBranch><cbc:ID>${x(p.bic)}</cbc:ID></cac:FinancialInstitutionBranch>` : '')
        + '</cac:PayeeFinancialAccount></cac:PaymentMeans>',
    );
  }
  // An amount due needs a due date or payment terms (BR-CO-25); a UBL credit note has no DueDate.
  const terms = seller.payment_terms ?? (isCredit ? `Credit for invoice ${opts.credited?.number ?? ''}`.trim() : null);
  if (terms) parts.push(`<cac:PaymentTerms><cbc:Note>${x(terms)}</cbc:Note></cac:PaymentTerms>`);
  parts.push((doc.allowance_charges ?? []).map((a) => documentAllowanceCharge(a, cur)).join(''));
  parts.push(
    `<cac:TaxTotal>${amount('TaxAmount', tax, cur)}`
      + breakdown.map((r) => `<cac:TaxSubtotal>${amount('TaxableAmount', r.taxable, cur)}${amount('TaxAmount', r.tax, cur)}${taxCategory('TaxCategory', r)}</cac:TaxSubtotal>`).join('')
      + '</cac:TaxTotal>',
    `<cac:LegalMonetaryTotal>${amount('LineExtensionAmount', totals.line_extension, cur)}${amount('TaxExclusiveAmount', totals.tax_exclusive, cur)}`
      + `${amount('TaxInclusiveAmount', totals.tax_inclusive, cur)}`
      + (amounts.allowance_total ? amount('AllowanceTotalAmount', amounts.allowance_total, cur) : '')
      + (amounts.charge_total ? amount('ChargeTotalAmount', amounts.charge_total, cur) : '')
      + `${amount('PayableAmount', totals.payable, cur)}</cac:LegalMonetaryTotal>`,
  );
  const lineTag = isCredit ? 'CreditNoteLine' : 'InvoiceLine';
  const qtyTag = isCredit ? 'CreditedQuantity' : 'InvoicedQuantity';
  doc.lines.forEach((l, i) => {
    // The line's discount and charges as the line model keeps them: quantity × price − allowances + charges = its net amount (PEPPOL-EN16931-R120).
    const allowance = lineParts(l).allowance_charges.map((a) => lineAllowanceCharge(a, cur)).join('');
    const v = opts.line_vat[i];
    parts.push(
      `<cac:${lineTag}><cbc:ID>${i + 1}</cbc:ID><cbc:${qtyTag} unitCode="${x(l.unit)}">${decimalQuantity(l.quantity)}</cbc:${qtyTag}>${amount('LineExtensionAmount', l.subtotal, cur)}${allowance}`
        + `<cac:Item><cbc:Name>${x(l.description)}</cbc:Name>${l.item_id ? `<cac:SellersItemIdentification><cbc:ID>${x(l.item_id)}</cbc:ID></cac:SellersItemIdentification>` : ''}`
        + `${taxCategory('ClassifiedTaxCategory', { category: v.category, rate_ppm: l.tax_rate_ppm })}</cac:Item>`
        + `<cac:Price>${amount('PriceAmount', l.unit_price, cur)}</cac:Price></cac:${lineTag}>`,
    );
  });
  parts.push(`</${root}>`);
  return { xml: parts.join(''), totals, breakdown };
}
