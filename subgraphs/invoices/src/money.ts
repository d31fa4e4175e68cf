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

/** Today's date (YYYY-MM-DD) in the workspace's zone; Colombia is UTC−5 all year. */
export function localDate(at: Date, offsetMinutes = -300): string {
  return new Date(at.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 10);
}

/** Adds days to a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
