import { CuadraError, MONEY_LIMIT } from '@cuadra/shared';

/** One line of a statement as a parser reads it, before it becomes a bank transaction. */
export interface StatementEntry {
  /** The bank's id of the entry (camt AcctSvcrRef/NtryRef, OFX FITID, a CSV id column); null when the file has none. */
  entry_id: string | null;
  date: string;
  /** Signed minor units: + credit, − debit. */
  amount: number;
  currency: string;
  description: string;
  reference: string | null;
}

/** A parsed statement: its own id, the account it names (when it names one), its lines. */
export interface ParsedStatement {
  statement_id: string;
  /** The account number or IBAN the file says it belongs to; null when the format carries none (CSV). */
  account: string | null;
  currency: string | null;
  entries: StatementEntry[];
  /** Lines the file holds that are not booked (camt PDNG/INFO): not imported. */
  skipped: number;
}

/** Most lines one statement file may hold. */
export const MAX_STATEMENT_ENTRIES = 5_000;

/** Minor-unit digits of a currency (ISO 4217); 2 unless listed. */
const ZERO_DECIMALS = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const THREE_DECIMALS = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

export function minorDigits(currency: string): number {
  return ZERO_DECIMALS.has(currency) ? 0 : THREE_DECIMALS.has(currency) ? 3 : 2;
}

/** A refusal of the file at `field`, saying where in the file. */
export function badFile(message: string, field = '/content'): CuadraError {
  return new CuadraError('invalid_input', message, { field });
}

/**
 * A decimal amount as written in a statement ("1234.50", "-17,99" with a comma separator) in exact
 * minor units of the currency, never through floating point. More decimals than the currency has,
 * or anything that is not a plain decimal number, is refused.
 */
export function minorUnits(text: string, currency: string, what: string, separator: '.' | ',' = '.'): number {
  const digits = minorDigits(currency);
  let s = text.trim();
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  const parts = s.split(separator);
  const isDigits = (p: string) => p.length > 0 && [...p].every((c) => c >= '0' && c <= '9');
  if (parts.length > 2 || !isDigits(parts[0]) || (parts.length === 2 && !isDigits(parts[1]))) throw badFile(`${what}: "${text}" is not a decimal amount.`);
  const fraction = parts[1] ?? '';
  if (fraction.length > digits) throw badFile(`${what}: "${text}" has more decimals than ${currency} has (${digits}).`);
  const big = BigInt(parts[0]) * 10n ** BigInt(digits) + BigInt((fraction + '0'.repeat(digits)).slice(0, digits) || '0');
  if (big > BigInt(MONEY_LIMIT)) throw badFile(`${what}: "${text}" is beyond ±10^15 minor units.`);
  const n = Number(big);
  return negative ? -n : n;
}

/** Whether a string is a real calendar date `YYYY-MM-DD`. */
export function isDate(s: string): boolean {
  if (s.length !== 10 || s[4] !== '-' || s[7] !== '-') return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}
