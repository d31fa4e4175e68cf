import QRCode from 'qrcode';
import type { FiscalDocument } from '../lib/fiscal-document.ts';
import type { SettingsDoc } from '../lib/settings.ts';
import { decimalAmount } from '../lib/money.ts';
import { buyerId } from './ubl.ts';

/** DIAN's document search, by CUFE/CUDE: habilitación (test, TipoAmbiente 2) and production (1). */
export const DIAN_SEARCH_URL = {
  '1': 'https://catalogo-vpfe.dian.gov.co/document/searchqr?documentkey=',
  '2': 'https://catalogo-vpfe-hab.dian.gov.co/document/searchqr?documentkey=',
} as const;

/**
 * The QR code's text as DIAN's Anexo Técnico specifies it (sts:QRCode and the graphic
 * representation): one `Label: value` line each for NumFac, FecFac, HorFac, NitFac, DocAdq,
 * ValFac (before taxes), ValIva, ValOtroIm (other taxes: INC and ICA, none here), ValTolFac
 * (total with taxes), CUFE, and the document's address in DIAN's catalogue (QRCode), lines
 * separated by a line feed. Only a posted document has one.
 */
export function qrContent(doc: FiscalDocument, s: Pick<SettingsDoc, 'issuer' | 'environment'>): string {
  if (!doc.number || !doc.cufe || !doc.issue_time) throw new Error('Only a posted document has a QR code.');
  return [
    `NumFac: ${doc.number}`,
    `FecFac: ${doc.issue_date}`,
    `HorFac: ${doc.issue_time}`,
    `NitFac: ${s.issuer.nit}`,
    `DocAdq: ${buyerId(doc)}`,
    `ValFac: ${decimalAmount(doc.subtotal)}`,
    `ValIva: ${decimalAmount(doc.tax_total)}`,
    `ValOtroIm: ${decimalAmount(0)}`,
    `ValTolFac: ${decimalAmount(doc.total)}`,
    `CUFE: ${doc.cufe}`,
    `QRCode: ${DIAN_SEARCH_URL[s.environment]}${doc.cufe}`,
  ].join('\n');
}

/** The QR code as a PNG image (error correction M, a quiet zone of 4 modules as the standard asks). */
export async function qrPng(content: string): Promise<Buffer> {
  return QRCode.toBuffer(content, { type: 'png', errorCorrectionLevel: 'M', margin: 4, scale: 4 });
}
