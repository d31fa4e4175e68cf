import { applyRate, checkedAmount, CuadraError, roundDiv } from '@cuadra/shared';
import type { LineVat, VatCategory } from './tax-regime.ts';
import { quantityMicros, storedMicros } from './money.ts';

/**
 * One model of a sales line and of a document's totals, from which the DIAN UBL (e-documents/ubl.ts),
 * the Peppol BIS 3 UBL (e-documents/peppol/ubl.ts), the printed representation and the journal all
 * read, so they cannot disagree. It is the rule both standards state:
 *
 * - a line's net amount = quantity × price − its allowances + its charges (Anexo Técnico 1.9,
 *   InvoiceLine/cbc:LineExtensionAmount; EN 16931 BT-131, PEPPOL-EN16931-R120), each allowance and
 *   charge a `cac:AllowanceCharge` of the line with its base, percentage and amount;
 * - the document's allowances and charges (`cac:AllowanceCharge` of the document) move what is
 *   payable: DIAN: PayableAmount = TaxInclusiveAmount − AllowanceTotalAmount + ChargeTotalAmount
 *   (FAU14), and they do not change the VAT base; EN 16931: TaxExclusiveAmount = Σ line net −
 *   allowances + charges (BR-CO-13), each with its VAT category in the VAT breakdown.
 *
 * Amounts are integer minor units, computed exactly and rounded once each, half away from zero:
 * gross = round(quantity × price); each percentage allowance or charge = round(gross × rate); the
 * net is what is left. Tax is computed on the net (and, outside Colombia, on each document-level
 * allowance or charge) and rounded per line, as it is posted.
 */

/** An allowance (discount) or charge of one line, computed: BaseAmount × MultiplierFactorNumeric = Amount. */
export interface LineAllowanceCharge {
  /** ChargeIndicator: true for a charge, false for an allowance (discount). */
  charge: boolean;
  /** AllowanceChargeReason (free text). */
  reason: string;
  /** EN 16931 reason code: UNCL5189 for allowances (95 = discount), UNCL7161 for charges; null when only the text is known. */
  reason_code: string | null;
  /** The percentage in basis points (MultiplierFactorNumeric = rate_bps / 100). */
  rate_bps: number;
  /** BaseAmount: the line's gross amount (quantity × price). */
  base: number;
  /** Amount = round(base × rate_bps / 10000). */
  amount: number;
}

/** A charge of a line as a caller writes it: a percentage of the line's gross amount. */
export interface LineChargeInput {
  reason: string;
  reason_code?: string;
  rate_bps: number;
}

/** JSON Schema of a line's charges (percentages of its gross amount; discounts are `discount_bps`). */
export const LINE_CHARGES_SCHEMA = {
  type: 'array', maxItems: 5,
  description: 'Charges on the line (packaging, handling…), each a percentage of quantity × price; they add to the line amount and its VAT base.',
  items: {
    type: 'object', additionalProperties: false, required: ['reason', 'rate_bps'],
    properties: {
      reason: { type: 'string', minLength: 1, maxLength: 200 },
      reason_code: { type: 'string', pattern: '^[A-Z0-9]{1,3}$', description: 'UNCL7161 charge reason code, for EN 16931 (e.g. ABL packaging, FC freight).' },
      rate_bps: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    },
  },
} as const;

/** The computed amounts of one line. */
export interface PricedLine {
  /** round(quantity × unit price). */
  gross: number;
  /** The line's allowances (its discount) then its charges. */
  allowance_charges: LineAllowanceCharge[];
  /** gross − allowances + charges: the line's net amount (LineExtensionAmount). */
  subtotal: number;
  tax: number;
  total: number;
}

/** Amount × rate in basis points, rounded once. */
export function applyBps(amount: number, bps: number): number {
  return Number(roundDiv(BigInt(amount) * BigInt(bps), 10_000n));
}

/** Amount × rate in parts per million, rounded once (the shared money rule). */
const applyPpm = applyRate;

/** The discount of a line as an allowance (reason 95, UNCL5189 "Discount"). */
function discountOf(gross: number, discountBps: number): LineAllowanceCharge {
  return { charge: false, reason: 'Descuento', reason_code: '95', rate_bps: discountBps, base: gross, amount: applyBps(gross, discountBps) };
}

/**
 * Prices one line exactly: gross, its discount and charges, the net amount, its tax. Refused at
 * `field` when an amount leaves ±10^15, when the quantity is not a valid one, or when the discount
 * takes the line below zero (VLR01: amounts are positive).
 */
export function priceLine(quantity: number, unitPrice: number, discountBps: number, charges: readonly LineChargeInput[], taxRatePpm: number, field = '/lines/0'): PricedLine {
  const micros = quantityMicros(quantity, `${field}/quantity`);
  const gross = checkedAmount(roundDiv(micros * BigInt(unitPrice), 1_000_000n), field, 'The line amount');
  const parts: LineAllowanceCharge[] = [];
  if (discountBps > 0) parts.push(discountOf(gross, discountBps));
  charges.forEach((c, i) => {
    parts.push({ charge: true, reason: c.reason, reason_code: c.reason_code ?? null, rate_bps: c.rate_bps, base: gross, amount: checkedAmount(applyBps(gross, c.rate_bps), `${field}/charges/${i}`, 'The charge') });
  });
  const net = parts.reduce((s, p) => s + (p.charge ? p.amount : -p.amount), gross);
  if (net < 0) throw new CuadraError('invalid_input', 'The line\'s discount takes it below zero.', { field: `${field}/discount_bps` });
  const subtotal = checkedAmount(net, field, 'The line subtotal');
  const tax = checkedAmount(applyPpm(subtotal, taxRatePpm), field, 'The line tax');
  return { gross, allowance_charges: parts, subtotal, tax, total: checkedAmount(subtotal + tax, field, 'The line total') };
}

/** What the model reads of a stored line. */
export interface ModelLineSource {
  quantity: number;
  unit_price: number;
  discount_bps: number;
  subtotal: number;
  tax: number;
  tax_rate_ppm: number;
  gross?: number;
  allowance_charges?: LineAllowanceCharge[];
}

/**
 * A stored line's gross amount and allowances/charges. Lines written before the model kept them
 * (only `discount_bps` and the net `subtotal`) are read back the way they were priced then: gross =
 * round(quantity × price), and the discount is what took it to the stored net.
 */
export function lineParts(l: ModelLineSource): { gross: number; allowance_charges: LineAllowanceCharge[] } {
  if (l.gross !== undefined && l.allowance_charges) return { gross: l.gross, allowance_charges: l.allowance_charges };
  const gross = Number(roundDiv(storedMicros(l.quantity) * BigInt(l.unit_price), 1_000_000n));
  const discount = gross - l.subtotal;
  return { gross, allowance_charges: l.discount_bps > 0 && discount > 0 ? [{ ...discountOf(gross, l.discount_bps), amount: discount }] : [] };
}

/** An allowance or charge of the whole document, computed. */
export interface DocumentAllowanceCharge {
  charge: boolean;
  reason: string;
  /** EN 16931: UNCL5189 (allowances) / UNCL7161 (charges). DIAN discounts carry their own list (00 no condicionado). */
  reason_code: string | null;
  /** The percentage of `base` in basis points, or null for a fixed amount. */
  rate_bps: number | null;
  /** BaseAmount: the document's line total for a percentage; the amount itself for a fixed amount. */
  base: number;
  amount: number;
  /** VAT on it (outside Colombia; in Colombia it does not change the VAT base and this is 0). */
  tax_rate_ppm: number;
  tax: number;
  /** Outside Colombia: its EN 16931 VAT category (BT-95/BT-102). */
  vat?: LineVat | null;
}

/** A document-level allowance or charge as a caller writes it. */
export interface DocumentAllowanceChargeInput {
  charge: boolean;
  reason: string;
  reason_code?: string;
  rate_bps?: number;
  amount?: number;
  tax_rate_ppm?: number;
  tax_category?: VatCategory;
  tax_exemption_reason?: string;
  tax_exemption_reason_code?: string;
}

/** JSON Schema of a document's allowances and charges. */
export const DOCUMENT_ALLOWANCE_CHARGES_SCHEMA = {
  type: 'array', maxItems: 10,
  description: 'Allowances (discounts, charge: false) and charges (freight, handling…, charge: true) of the whole document: a percentage of the line total (rate_bps) or a fixed amount in cents. In Colombia they change what is payable, not the VAT base (tax_rate_ppm 0); elsewhere they carry their VAT rate.',
  items: {
    type: 'object', additionalProperties: false, required: ['charge', 'reason'],
    properties: {
      charge: { type: 'boolean' },
      reason: { type: 'string', minLength: 1, maxLength: 200 },
      reason_code: { type: 'string', pattern: '^[A-Z0-9]{1,3}$' },
      rate_bps: { type: 'integer', minimum: 1, maximum: 10_000 },
      amount: { type: 'integer', minimum: 1, maximum: 1e15 },
      tax_rate_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000 },
      tax_category: { enum: ['S', 'Z', 'E', 'AE', 'K', 'G', 'O'] },
      tax_exemption_reason: { type: 'string', minLength: 1, maxLength: 300 },
      tax_exemption_reason_code: { type: 'string', pattern: '^VATEX-[A-Z0-9-]{1,30}$' },
    },
    // A percentage of the line total or a fixed amount, one of the two.
    oneOf: [{ properties: { rate_bps: true }, required: ['rate_bps'] }, { properties: { amount: true }, required: ['amount'] }],
  },
} as const;

/** Prices the document's allowances and charges on its line total. */
export function priceDocumentAllowanceCharges(lineTotal: number, input: readonly (DocumentAllowanceChargeInput & { vat?: LineVat | null })[], field = '/allowance_charges'): DocumentAllowanceCharge[] {
  return input.map((a, i) => {
    const at = `${field}/${i}`;
    const amount = a.rate_bps !== undefined ? applyBps(lineTotal, a.rate_bps) : a.amount!;
    const rate = a.tax_rate_ppm ?? 0;
    return {
      ...(a.vat ? { vat: a.vat } : {}),
      charge: a.charge, reason: a.reason, reason_code: a.reason_code ?? null, rate_bps: a.rate_bps ?? null,
      base: a.rate_bps !== undefined ? lineTotal : amount, amount: checkedAmount(amount, at, 'The amount'),
      tax_rate_ppm: rate, tax: checkedAmount(applyPpm(amount, rate), at, 'The tax'),
    };
  });
}

/** The totals every generator and the journal read, in minor units. */
export interface DocumentAmounts {
  /** Σ line net amounts (LineExtensionAmount; the CUFE's ValFac). */
  line_extension: number;
  allowance_total: number;
  charge_total: number;
  /** Σ line taxes + Σ document allowance/charge taxes (allowances reduce it). */
  tax_total: number;
  /** What is payable: line_extension + tax_total − allowance_total + charge_total (the CUFE's ValTot). */
  payable: number;
}

/** The document's totals from its lines and document-level allowances/charges. */
export function documentAmounts(lines: readonly { subtotal: number; tax: number }[], acs: readonly DocumentAllowanceCharge[] = []): DocumentAmounts {
  const lineExtension = lines.reduce((s, l) => s + l.subtotal, 0);
  const allowances = acs.filter((a) => !a.charge);
  const charges = acs.filter((a) => a.charge);
  const allowanceTotal = allowances.reduce((s, a) => s + a.amount, 0);
  const chargeTotal = charges.reduce((s, a) => s + a.amount, 0);
  const tax = lines.reduce((s, l) => s + l.tax, 0) - allowances.reduce((s, a) => s + a.tax, 0) + charges.reduce((s, a) => s + a.tax, 0);
  return { line_extension: lineExtension, allowance_total: allowanceTotal, charge_total: chargeTotal, tax_total: tax, payable: lineExtension + tax - allowanceTotal + chargeTotal };
}

/** A stored document allowance or charge as it would be given again (to price it on new lines). */
export function allowanceChargeInput(a: DocumentAllowanceCharge): DocumentAllowanceChargeInput {
  return {
    charge: a.charge, reason: a.reason, ...(a.reason_code ? { reason_code: a.reason_code } : {}),
    ...(a.rate_bps !== null ? { rate_bps: a.rate_bps } : { amount: a.amount }), tax_rate_ppm: a.tax_rate_ppm,
    ...(a.vat ? { tax_category: a.vat.category, ...(a.vat.reason ? { tax_exemption_reason: a.vat.reason } : {}), ...(a.vat.reason_code ? { tax_exemption_reason_code: a.vat.reason_code } : {}) } : {}),
  };
}

/** A stored line's charges as they were given (to price the line again for another quantity). */
export function lineChargesOf(l: ModelLineSource): LineChargeInput[] {
  return lineParts(l).allowance_charges.filter((p) => p.charge).map((p) => ({ reason: p.reason, ...(p.reason_code ? { reason_code: p.reason_code } : {}), rate_bps: p.rate_bps }));
}
