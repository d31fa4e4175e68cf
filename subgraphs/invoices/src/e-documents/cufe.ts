import { createHash } from 'node:crypto';
import { decimalAmount } from '../lib/money.ts';

/** The values DIAN's CUFE/CUDE is computed from (Anexo Técnico 1.9, §11.2). Amounts in cents. */
export interface CufeInput {
  /** NumFac: prefix + consecutive. */
  number: string;
  /** FecFac: YYYY-MM-DD. */
  issueDate: string;
  /** HorFac: HH:MM:SS with offset, e.g. `10:15:00-05:00`. */
  issueTime: string;
  /** ValFac: total before taxes. */
  subtotal: number;
  /** ValIVA (tax code 01). */
  vat: number;
  /** ValINC (tax code 04), national consumption tax. */
  inc: number;
  /** ValICA (tax code 03). */
  ica: number;
  /** ValTot: payable amount (taxes included). */
  total: number;
  /** NitOFE: the issuer's NIT without check digit. */
  issuerNit: string;
  /** NumAdq: the buyer's identification number. */
  buyerId: string;
  /** ClTec (CUFE: the range's technical key) or the software PIN (CUDE). */
  key: string;
  /** TipoAmbiente: `1` production, `2` test. */
  environment: '1' | '2';
}

/** The string that is hashed, exactly as DOMAIN.md writes it. */
export function cufeSource(i: CufeInput): string {
  return `${i.number}${i.issueDate}${i.issueTime}${decimalAmount(i.subtotal)}01${decimalAmount(i.vat)}04${decimalAmount(i.inc)}03${decimalAmount(i.ica)}${decimalAmount(i.total)}${i.issuerNit}${i.buyerId}${i.key}${i.environment}`;
}

/** CUFE (invoices, key = technical key) or CUDE (credit/debit notes, key = software PIN): SHA-384, lower-case hex. */
export function cufe(i: CufeInput): string {
  return createHash('sha384').update(cufeSource(i), 'utf8').digest('hex');
}

/** DIAN's identification of a final consumer without an id (consumidor final). */
export const FINAL_CONSUMER_ID = '222222222222';
