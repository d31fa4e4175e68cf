import type { Element } from '@xmldom/xmldom';
import { parseXml, XmlError } from '../../e-documents/xml.ts';

/** UBL 2.1 namespaces (OASIS) a DIAN document uses. */
const NS = {
  attached: 'urn:oasis:names:specification:ubl:schema:xsd:AttachedDocument-2',
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
} as const;

/** Why a file cannot become a bill, in words for the person who uploaded it. */
export class DocumentProblem extends Error {}

/** A tax or withholding subtotal as the invoice states it (amounts in minor units, rate in ppm). */
export interface UblTaxSubtotal { scheme: string; taxable: number; amount: number; rate_ppm: number }

/** One invoice line as the supplier wrote it. */
export interface UblLine {
  description: string;
  quantity: number;
  unit_price: number;
  /** cbc:LineExtensionAmount: quantity × price (after line allowances), before tax. */
  net: number;
  vat_rate_ppm: number;
  vat: number;
}

/** The fields of a supplier's UBL 2.1 invoice that a bill and the CUFE check need (amounts in minor units). */
export interface UblInvoice {
  number: string;
  cufe: string;
  cufe_scheme: string | null;
  issue_date: string;
  issue_time: string;
  due_date: string | null;
  currency: string;
  /** cbc:ProfileExecutionID: 1 production, 2 test (TipoAmbiente). */
  environment: string;
  supplier_nit: string;
  supplier_name: string;
  /** The NIT's check digit as the invoice gives it (CompanyID@schemeID), or null. */
  supplier_check_digit: string | null;
  /** The supplier's e-mail (cac:Contact/cbc:ElectronicMail), or null. */
  supplier_email: string | null;
  buyer_id: string;
  lines: UblLine[];
  /** Document-level cac:TaxTotal amounts by scheme (01 IVA, 04 INC, 03 ICA). */
  taxes: Record<string, number>;
  withholdings: UblTaxSubtotal[];
  totals: { line_extension: number; tax_exclusive: number; tax_inclusive: number; allowances: number; charges: number; prepaid: number; payable: number };
  /** What the AttachedDocument wrapper says about its parent invoice (null for a bare invoice). */
  wrapper: { parent_id: string | null; parent_uuid: string | null } | null;
}

/** The direct children of `el` with a namespace and local name. */
function children(el: Element, ns: string, local: string): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === local) out.push(n as Element);
  }
  return out;
}

/** The element at a path of `prefix:local` steps (first match at each step), or null. */
function at(el: Element, path: string): Element | null {
  let cur: Element | null = el;
  for (const step of path.split('/')) {
    if (!cur) return null;
    const [prefix, local] = step.split(':') as [keyof typeof NS, string];
    cur = children(cur, NS[prefix], local)[0] ?? null;
  }
  return cur;
}

function textOf(el: Element | null): string | null {
  const t = el?.textContent?.trim();
  return t ? t : null;
}

function required(el: Element, path: string): string {
  const t = textOf(at(el, path));
  if (t === null) throw new DocumentProblem(`The invoice has no ${path}.`);
  return t;
}

/** A UBL decimal amount in minor units (2 decimals; further decimals must be zeros). */
export function minorUnits(text: string, what: string): number {
  const [whole, frac = ''] = text.split('.');
  if (!/^\d{1,13}$/.test(whole!) || !/^\d*$/.test(frac) || /[1-9]/.test(frac.slice(2))) throw new DocumentProblem(`${what} "${text}" is not an amount in cents.`);
  return Number(whole) * 100 + Number(frac.slice(0, 2).padEnd(2, '0'));
}

/** A UBL percent (`19.00`) in parts per million. */
function ppm(text: string, what: string): number {
  const [whole, frac = ''] = text.split('.');
  if (!/^\d{1,3}$/.test(whole!) || !/^\d*$/.test(frac) || /[1-9]/.test(frac.slice(4))) throw new DocumentProblem(`${what} "${text}" is not a percent.`);
  return Number(whole) * 10000 + Number(frac.slice(0, 4).padEnd(4, '0'));
}

function amount(el: Element, path: string, what: string, optional = false): number {
  const t = textOf(at(el, path));
  if (t === null) {
    if (optional) return 0;
    throw new DocumentProblem(`The invoice has no ${what} (${path}).`);
  }
  return minorUnits(t, what);
}

function subtotals(total: Element): UblTaxSubtotal[] {
  return children(total, NS.cac, 'TaxSubtotal').map((s) => ({
    scheme: textOf(at(s, 'cac:TaxCategory/cac:TaxScheme/cbc:ID')) ?? '',
    taxable: amount(s, 'cbc:TaxableAmount', 'a taxable amount', true),
    amount: amount(s, 'cbc:TaxAmount', 'a tax amount'),
    rate_ppm: ppm(textOf(at(s, 'cac:TaxCategory/cbc:Percent')) ?? '0', 'A tax percent'),
  }));
}

/**
 * Parses XML with the e-invoicing reader (@xmldom/xmldom): refuses anything not well-formed, any
 * DTD (no entity tricks), and documents too big or too deep (e-documents/xml.ts).
 */
function parseDocument(xml: string): Element {
  try {
    return parseXml(xml);
  } catch (err) {
    if (err instanceof XmlError) throw new DocumentProblem(`The file is not well-formed XML: ${err.message}`);
    throw err;
  }
}

/**
 * Reads a supplier's e-invoice: a DIAN AttachedDocument (the invoice XML inside
 * cac:Attachment/cac:ExternalReference/cbc:Description) or a bare UBL 2.1 Invoice. Throws
 * {@link DocumentProblem} with the reason when the file is not XML, not one of these, or lacks
 * what a bill needs. Only reads; the checks of the amounts are the caller's (they need bill rules).
 */
export function readSupplierInvoice(xml: string): UblInvoice {
  let root = parseDocument(xml);
  let wrapper: UblInvoice['wrapper'] = null;
  if (root.namespaceURI === NS.attached && root.localName === 'AttachedDocument') {
    const inner = textOf(at(root, 'cac:Attachment/cac:ExternalReference/cbc:Description'));
    if (!inner) throw new DocumentProblem('The AttachedDocument carries no invoice in cac:Attachment/cac:ExternalReference/cbc:Description.');
    wrapper = {
      parent_id: textOf(at(root, 'cbc:ParentDocumentID')),
      parent_uuid: textOf(at(root, 'cac:ParentDocumentLineReference/cac:DocumentReference/cbc:UUID')),
    };
    root = parseDocument(inner);
  }
  if (root.namespaceURI !== NS.invoice || root.localName !== 'Invoice') {
    throw new DocumentProblem(`The file is XML but not a UBL 2.1 Invoice or DIAN AttachedDocument (its root is ${root.namespaceURI ? `{${root.namespaceURI}}` : ''}${root.localName}).`);
  }
  const uuid = at(root, 'cbc:UUID');
  const lines = children(root, NS.cac, 'InvoiceLine').map((l, i): UblLine => {
    const quantityText = required(l, 'cbc:InvoicedQuantity');
    if (!/^\d{1,10}(\.\d{1,6})?$/.test(quantityText) || Number(quantityText) <= 0) throw new DocumentProblem(`Line ${i + 1}: the quantity "${quantityText}" is not a positive number with at most 6 decimals.`);
    const base = textOf(at(l, 'cac:Price/cbc:BaseQuantity'));
    if (base !== null && Number(base) !== 1) throw new DocumentProblem(`Line ${i + 1}: a price per ${base} units is not supported; the price must be per unit.`);
    const vat = children(l, NS.cac, 'TaxTotal').flatMap(subtotals).filter((s) => s.scheme === '01');
    return {
      description: (textOf(at(l, 'cac:Item/cbc:Description')) ?? `Line ${i + 1}`).slice(0, 500),
      quantity: Number(quantityText),
      unit_price: amount(l, 'cac:Price/cbc:PriceAmount', `line ${i + 1}'s price`),
      net: amount(l, 'cbc:LineExtensionAmount', `line ${i + 1}'s amount`),
      vat_rate_ppm: vat[0]?.rate_ppm ?? 0,
      vat: vat.reduce((s, v) => s + v.amount, 0),
    };
  });
  if (lines.length === 0) throw new DocumentProblem('The invoice has no lines (cac:InvoiceLine).');
  if (lines.length > 500) throw new DocumentProblem('The invoice has more than 500 lines; a bill holds at most 500.');
  const taxes: Record<string, number> = {};
  for (const t of children(root, NS.cac, 'TaxTotal')) {
    for (const s of subtotals(t)) taxes[s.scheme] = (taxes[s.scheme] ?? 0) + s.amount;
  }
  const money = at(root, 'cac:LegalMonetaryTotal');
  if (!money) throw new DocumentProblem('The invoice has no cac:LegalMonetaryTotal.');
  return {
    number: required(root, 'cbc:ID'),
    cufe: textOf(uuid) ?? '',
    cufe_scheme: uuid?.getAttribute('schemeName') || null,
    issue_date: required(root, 'cbc:IssueDate'),
    issue_time: required(root, 'cbc:IssueTime'),
    due_date: textOf(at(root, 'cbc:DueDate')) ?? textOf(at(root, 'cac:PaymentMeans/cbc:PaymentDueDate')),
    currency: required(root, 'cbc:DocumentCurrencyCode'),
    environment: textOf(at(root, 'cbc:ProfileExecutionID')) ?? '',
    supplier_nit: required(root, 'cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID'),
    supplier_name: required(root, 'cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:RegistrationName'),
    supplier_check_digit: at(root, 'cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID')?.getAttribute('schemeID') || null,
    supplier_email: textOf(at(root, 'cac:AccountingSupplierParty/cac:Party/cac:Contact/cbc:ElectronicMail')),
    buyer_id: required(root, 'cac:AccountingCustomerParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID'),
    lines,
    taxes,
    withholdings: children(root, NS.cac, 'WithholdingTaxTotal').flatMap(subtotals),
    totals: {
      line_extension: amount(money, 'cbc:LineExtensionAmount', 'the lines\' total'),
      tax_exclusive: amount(money, 'cbc:TaxExclusiveAmount', 'the taxable total'),
      tax_inclusive: amount(money, 'cbc:TaxInclusiveAmount', 'the total with taxes'),
      allowances: amount(money, 'cbc:AllowanceTotalAmount', 'the allowances', true),
      charges: amount(money, 'cbc:ChargeTotalAmount', 'the charges', true),
      prepaid: amount(money, 'cbc:PrepaidAmount', 'the prepaid amount', true),
      payable: amount(money, 'cbc:PayableAmount', 'the payable amount'),
    },
    wrapper,
  };
}
