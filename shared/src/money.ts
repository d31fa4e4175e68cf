import { CuadraError } from './errors.ts';

/**
 * Exact money (CONTRACT §9): every amount, given or computed, is an integer number of minor units
 * within ±10^15, which a JavaScript number holds exactly (2^53 ≈ 9·10^15, so the sum of two such
 * amounts is still exact and can be checked). Products that can leave that range (quantity × unit
 * price, amount × rate) are computed in BigInt and rounded once, half away from zero.
 */
export const MONEY_LIMIT = 1_000_000_000_000_000;
/** Quantities: up to 6 decimal places, at most 10^9. */
export const QUANTITY_LIMIT = 1_000_000_000;
export const QUANTITY_DECIMALS = 6;
/** Rates of taxes and withholdings are integer parts per million (19 % = 190000). */
export const PPM = 1_000_000;

/** JSON Schema of an amount in minor units. */
export const AMOUNT_SCHEMA = { type: 'integer', minimum: -MONEY_LIMIT, maximum: MONEY_LIMIT } as const;
/** JSON Schema of a tax or withholding rate in parts per million. */
export const RATE_PPM_SCHEMA = { type: 'integer', minimum: 0, maximum: PPM } as const;
/** JSON Schema of a quantity (the 6-decimal rule is checked by {@link quantityMicros}: `multipleOf` is inexact in floating point). */
export const QUANTITY_SCHEMA = { type: 'number', minimum: 0.000001, maximum: QUANTITY_LIMIT, description: 'Up to 6 decimal places, from 0.000001 to 10^9.' } as const;

const PLAIN_QUANTITY = /^\d{1,10}(\.\d{1,6})?$/;

/** Divides and rounds half away from zero (how DIAN and EN 16931 round), exactly. */
export function roundDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  const q = (abs * 2n + denominator) / (denominator * 2n);
  return negative ? -q : q;
}

/** An amount as a number, refused (naming `field`) when it leaves ±10^15. */
export function checkedAmount(value: bigint | number, field: string, what = 'The amount'): number {
  const big = typeof value === 'bigint' ? value : BigInt(value);
  if (big > BigInt(MONEY_LIMIT) || big < -BigInt(MONEY_LIMIT)) {
    throw new CuadraError('invalid_input', `${what} would be ${big.toString()} minor units, beyond the limit of ±10^15.`, { field });
  }
  return Number(big);
}

/** Adds amounts, refusing (at `fieldOf(i)`) the first one that takes the running sum out of range. */
export function sumAmounts(values: readonly number[], fieldOf: (index: number) => string, what = 'The total'): number {
  let sum = 0;
  values.forEach((v, i) => { sum = checkedAmount(sum + v, fieldOf(i), what); });
  return sum;
}

/** A quantity as an integer number of millionths, refused at `field` if it has more than 6 decimals or is out of range. */
export function quantityMicros(quantity: number, field: string): bigint {
  const text = String(quantity);
  if (!Number.isFinite(quantity) || quantity <= 0 || quantity > QUANTITY_LIMIT || !PLAIN_QUANTITY.test(text)) {
    throw new CuadraError('invalid_input', `The quantity ${text} must be above 0, at most 10^9, with up to 6 decimal places.`, { field });
  }
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/** Amount × rate (parts per million), rounded half away from zero. */
export function applyRate(base: number, ratePpm: number): number {
  return Number(roundDiv(BigInt(base) * BigInt(ratePpm), BigInt(PPM)));
}

/**
 * Amounts of one line, exactly: subtotal = quantity × unit price × (1 − discount), rounded once;
 * tax = subtotal × rate, rounded once. Refused at `field` when any of them leaves ±10^15.
 */
export function lineAmounts(quantity: number, unitPrice: number, discountBps: number, taxRatePpm: number, field = '/lines/0'): { subtotal: number; tax: number; total: number } {
  const micros = quantityMicros(quantity, `${field}/quantity`);
  const subtotal = checkedAmount(roundDiv(micros * BigInt(unitPrice) * BigInt(10_000 - discountBps), 1_000_000n * 10_000n), field, 'The line subtotal');
  const tax = checkedAmount(roundDiv(BigInt(subtotal) * BigInt(taxRatePpm), BigInt(PPM)), field, 'The line tax');
  return { subtotal, tax, total: checkedAmount(subtotal + tax, field, 'The line total') };
}

/** Minor units as a plain decimal string with two places (`123456` → `1234.56`); never exponent notation. */
export function decimalAmount(cents: number): string {
  const big = BigInt(Math.trunc(cents));
  const abs = big < 0n ? -big : big;
  return `${big < 0n ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** A rate in parts per million as a percentage string (`190000` → `19.00`, `4140` → `0.414`), at least `minDecimals` places. */
export function percentFromPpm(ppm: number, minDecimals = 2): string {
  const whole = Math.trunc(ppm / 10_000);
  let fraction = String(ppm % 10_000).padStart(4, '0').replace(/0+$/, '');
  if (fraction.length < minDecimals) fraction = fraction.padEnd(minDecimals, '0');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/** A quantity as a plain decimal string (`1e-6` → `0.000001`). */
export function decimalQuantity(quantity: number): string {
  const micros = quantityMicros(quantity, '/quantity');
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${micros / 1_000_000n}${fraction ? `.${fraction}` : ''}`;
}

/** A stored quantity (already checked on the way in; may be 0) as millionths. */
export function storedMicros(quantity: number): bigint {
  return BigInt(Math.round(quantity * 1_000_000));
}

/** Millionths back to a quantity (exact: at most 10^15 millionths, within a double's integers). */
export function quantityFromMicros(micros: bigint): number {
  return Number(micros) / 1_000_000;
}

/**
 * The lines of an entry that undoes another: every line kept (account, party, tags), its debit
 * and credit swapped. The one place debit and credit swap — the finance books' `reverseEntry` and
 * payroll's feed of a voided run both call it (ERPNext's `make_reverse_gl_entries`).
 */
export function reversedLines<L extends { debit: number; credit: number }>(lines: readonly L[]): L[] {
  return lines.map((l) => ({ ...l, debit: l.credit, credit: l.debit }));
}
