/** VAT rates allowed in Colombia, in basis points (19 %, 5 %, 0 %). */
export const VAT_RATES_BPS = [1900, 500, 0] as const;

/** Rounds half away from zero to whole minor units (how DIAN and EN 16931 round line amounts). */
export function roundCents(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

/** Amounts of one line: subtotal after discount, its VAT, and their sum, all in cents. */
export function lineAmounts(quantity: number, unitPrice: number, discountBps: number, taxRateBps: number): { subtotal: number; tax: number; total: number } {
  const gross = quantity * unitPrice;
  const subtotal = roundCents(gross - (gross * discountBps) / 10_000);
  const tax = roundCents((subtotal * taxRateBps) / 10_000);
  return { subtotal, tax, total: subtotal + tax };
}

/**
 * Withholdings the customer makes on payment (Colombia): retención en la fuente and ReteICA
 * are taken on the line's taxable base, ReteIVA on the line's VAT. Rates in basis points; ICA
 * rates are per mil in law (9.66 ‰ = 96.6 bps), hence two decimals are allowed.
 */
export const WITHHOLDING_TYPES = ['retefuente', 'reteiva', 'reteica'] as const;
export type WithholdingType = (typeof WITHHOLDING_TYPES)[number];

/** One withholding rate, on a line or on the whole document. */
export interface WithholdingRate {
  type: WithholdingType;
  rate_bps: number;
}

/** A computed withholding amount of a document, per type and rate. */
export interface WithholdingAmount {
  type: WithholdingType;
  rate_bps: number;
  base: number;
  amount: number;
}

/** Base of a withholding type on one line. */
function withholdingBase(type: WithholdingType, line: { subtotal: number; tax: number }): number {
  return type === 'reteiva' ? line.tax : line.subtotal;
}

/**
 * Withholdings of a document: each line's own rates, else the document-level rates, are
 * applied line by line and rounded per line (half away from zero), then summed per type and rate.
 */
export function documentWithholdings(
  lines: readonly { subtotal: number; tax: number; withholdings?: readonly WithholdingRate[] | null }[],
  documentRates: readonly WithholdingRate[],
): WithholdingAmount[] {
  const totals = new Map<string, WithholdingAmount>();
  for (const line of lines) {
    const rates = line.withholdings && line.withholdings.length > 0 ? line.withholdings : documentRates;
    for (const rate of rates) {
      const base = withholdingBase(rate.type, line);
      const amount = roundCents((base * rate.rate_bps) / 10_000);
      const key = `${rate.type}:${rate.rate_bps}`;
      const acc = totals.get(key) ?? { type: rate.type, rate_bps: rate.rate_bps, base: 0, amount: 0 };
      acc.base += base;
      acc.amount += amount;
      totals.set(key, acc);
    }
  }
  return [...totals.values()];
}

/** Cents as a decimal string with two places (`123456` → `1234.56`), as DIAN's CUFE and UBL want. */
export function decimalAmount(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Local time of day with its offset (`10:15:00-05:00`), as the CUFE's HorFac wants it. */
export function localTime(at: Date, offsetMinutes = -300): string {
  const t = new Date(at.getTime() + offsetMinutes * 60_000).toISOString().slice(11, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${t}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

// Calendar arithmetic is shared by every module that reads windows (shared/src/periods.ts).
export { addDays, daysBetween, localDate } from '@cuadra/shared';
