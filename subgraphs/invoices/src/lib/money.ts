import { applyRate, checkedAmount, RATE_PPM_SCHEMA } from '@cuadra/shared';

// Exact money lives in the shared library (CONTRACT §9), so every module that sells or buys uses it.
export { decimalAmount, decimalQuantity, lineAmounts, percentFromPpm, quantityFromMicros, quantityMicros, storedMicros, sumAmounts } from '@cuadra/shared';

/** VAT rates allowed in Colombia, in parts per million (19 %, 5 %, 0 %). */
export const VAT_RATES_PPM = [190000, 50000, 0] as const;

/**
 * Withholdings the customer makes on payment (Colombia): retención en la fuente and ReteICA
 * are taken on the line's taxable base, ReteIVA on the line's VAT. Rates in parts per million
 * (ReteICA is per mil in law: 9.66 ‰ = 9660 ppm; retefuente 4 % = 40000).
 */
export const WITHHOLDING_TYPES = ['retefuente', 'reteiva', 'reteica'] as const;
export type WithholdingType = (typeof WITHHOLDING_TYPES)[number];

/** One withholding rate, on a line or on the whole document. */
export interface WithholdingRate {
  type: WithholdingType;
  rate_ppm: number;
}

/**
 * A computed withholding amount of a document, per type and rate — and, for retención en la fuente,
 * per concept of the lines it was taken on (absent on lines written before concepts existed).
 */
export interface WithholdingAmount {
  type: WithholdingType;
  rate_ppm: number;
  base: number;
  amount: number;
  concept?: string;
}

/** JSON Schema of a withholding rate in parts per million. */
export const WITHHOLDING_RATE_SCHEMA = { ...RATE_PPM_SCHEMA, description: 'Parts per million: 4 % = 40000; ReteICA 9.66 ‰ = 9660.' } as const;

/** Base of a withholding type on one line. */
function withholdingBase(type: WithholdingType, line: { subtotal: number; tax: number }): number {
  return type === 'reteiva' ? line.tax : line.subtotal;
}

/**
 * Withholdings of a document: each line's own rates, else the document-level rates, are
 * applied line by line and rounded per line (half away from zero), then summed per type and rate,
 * and retención en la fuente also per the line's concept (its account, 135515xx, and its
 * Formulario 350 row follow it). Sums stay within ±10^15 or the document is refused naming the line
 * that overflows.
 */
export function documentWithholdings(
  lines: readonly { subtotal: number; tax: number; withholdings?: readonly WithholdingRate[] | null; withholding_concept?: string }[],
  documentRates: readonly WithholdingRate[],
  fieldBase = '/lines',
): WithholdingAmount[] {
  const totals = new Map<string, WithholdingAmount>();
  lines.forEach((line, index) => {
    const rates = line.withholdings && line.withholdings.length > 0 ? line.withholdings : documentRates;
    for (const rate of rates) {
      const base = withholdingBase(rate.type, line);
      const amount = applyRate(base, rate.rate_ppm);
      const concept = rate.type === 'retefuente' ? line.withholding_concept : undefined;
      const key = `${rate.type}:${rate.rate_ppm}:${concept ?? ''}`;
      const acc = totals.get(key) ?? { type: rate.type, rate_ppm: rate.rate_ppm, base: 0, amount: 0, ...(concept ? { concept } : {}) };
      acc.base = checkedAmount(acc.base + base, `${fieldBase}/${index}`, `The ${rate.type} base`);
      acc.amount = checkedAmount(acc.amount + amount, `${fieldBase}/${index}`, `The ${rate.type} amount`);
      totals.set(key, acc);
    }
  });
  return [...totals.values()];
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
