import { CuadraError } from '@cuadra/shared';
import JSZip from 'jszip';
import nodemailer from 'nodemailer';
import type { FiscalDocument } from '../lib/fiscal-document.ts';
import type { SettingsDoc } from '../lib/settings.ts';

/**
 * Delivery of an accepted document to the buyer: DIAN's e-mail (Anexo Técnico, "envío al
 * adquirente") with one ZIP holding the AttachedDocument (XML) and the graphic representation
 * (PDF), sent with nodemailer (the SMTP client the gateway and payroll use) to the server named by
 * `SMTP_URL`, from `MAIL_FROM`.
 */

/** What is tracked per document (the invoice record's `delivery`). */
export interface DeliveryState {
  /** `sending` while claimed; `sent` accepted by the SMTP server; `bounced` the recipient refused (5xx); `failed` anything else. */
  status: 'sending' | 'sent' | 'bounced' | 'failed';
  to: string;
  at: Date;
  /** The Message-ID header, chosen before sending (so a crash after sending still knows it). */
  message_id: string;
  error: string | null;
  attempts: number;
}

/** JSON Schema of a delivery in an invoice's view. */
export const DELIVERY_VIEW_SCHEMA = {
  anyOf: [{ type: 'null' }, {
    type: 'object', additionalProperties: false, required: ['status', 'to', 'at', 'message_id', 'error', 'attempts'],
    properties: {
      status: { enum: ['sending', 'sent', 'bounced', 'failed'] },
      to: { type: 'string' },
      at: { type: 'string', format: 'date-time' },
      message_id: { type: 'string' },
      error: { type: ['string', 'null'] },
      attempts: { type: 'integer', minimum: 1 },
    },
  }],
} as const;

/** The public shape of a delivery. */
export function deliveryView(d: DeliveryState | null | undefined) {
  return d ? { status: d.status, to: d.to, at: new Date(d.at).toISOString(), message_id: d.message_id, error: d.error, attempts: d.attempts } : null;
}

/** DIAN's document type codes in the e-mail subject: 01 invoice, 91 credit note, 92 debit note. */
const TYPE_CODE = { invoice: '01', credit_note: '91', debit_note: '92' } as const;

/**
 * The subject DIAN asks for: issuer NIT; issuer name; document number; document type code; trade
 * name (the issuer's name again: no separate trade name is kept).
 */
export function deliverySubject(doc: Pick<FiscalDocument, 'number' | 'kind'>, s: Pick<SettingsDoc, 'issuer'>): string {
  return [s.issuer.nit, s.issuer.name, doc.number ?? '', TYPE_CODE[doc.kind], s.issuer.name].map((p) => p.replace(/[;\r\n]/g, ' ')).join(';');
}

/** The ZIP the buyer receives: `ad<number>.xml` (the AttachedDocument) and `<number>.pdf`. */
export async function deliveryZip(number: string, attachedXml: string, pdf: Buffer): Promise<Buffer> {
  const zip = new JSZip();
  // A fixed date: the same document zipped twice gives the same bytes.
  const date = new Date('2020-01-01T00:00:00Z');
  zip.file(`ad${number}.xml`, attachedXml, { date });
  zip.file(`${number}.pdf`, pdf, { date });
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 6 } });
}

type Transport = { sendMail(m: Record<string, unknown>): Promise<{ messageId?: string; rejected?: unknown[] }> };
const transports = new Map<string, Transport>();

/** One message to the buyer; `copyTo` also gets it in the same SMTP transaction (a hand-over proof: @cuadra/shared/mail-handover). */
export interface DeliveryMail { to: string; subject: string; text: string; messageId: string; zip?: { filename: string; content: Buffer }; copyTo?: string }

/** The outcome of one SMTP hand-over. */
export type DeliveryOutcome = { status: 'sent' } | { status: 'bounced' | 'failed'; error: string };

/** The mail sender, or `unavailable` when this server has no SMTP server configured. */
export function deliveryMailer(env: NodeJS.ProcessEnv = process.env): { from: string; domain: string; send(m: DeliveryMail): Promise<DeliveryOutcome> } {
  const url = env.SMTP_URL?.trim();
  if (!url) throw new CuadraError('unavailable', 'E-mail is not configured on this server (SMTP_URL); nothing was sent.');
  let t = transports.get(url);
  if (!t) {
    t = nodemailer.createTransport(url) as unknown as Transport;
    transports.set(url, t);
  }
  const transport = t;
  const from = env.MAIL_FROM?.trim() || 'Cuadra <no-reply@cuadra.localhost>';
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'cuadra.localhost';
  return {
    from, domain,
    async send(m) {
      try {
        const info = await transport.sendMail({
          from, to: m.to, subject: m.subject, text: m.text, messageId: m.messageId,
          attachments: m.zip ? [{ filename: m.zip.filename, content: m.zip.content, contentType: 'application/zip' }] : [],
          ...(m.copyTo ? { envelope: { from: /<([^<>\s]+@[^<>\s]+)>/.exec(from)?.[1] ?? from, to: [m.to, m.copyTo] } } : {}),
        });
        const rejected = (info.rejected ?? []).map((a) => String(typeof a === 'object' && a && 'address' in a ? (a as { address: string }).address : a).toLowerCase());
        if (rejected.includes(m.to.toLowerCase())) return { status: 'bounced', error: `The mail server refused ${m.to}.` };
        return { status: 'sent' };
      } catch (err) {
        const e = err as { responseCode?: number; response?: string; message?: string; code?: string };
        const detail = (e.response ?? e.message ?? String(err)).slice(0, 500);
        // A permanent refusal of the recipient (5xx at RCPT TO): the address does not take mail.
        if (e.code === 'EENVELOPE' && typeof e.responseCode === 'number' && e.responseCode >= 500) return { status: 'bounced', error: detail };
        return { status: 'failed', error: detail };
      }
    },
  };
}
