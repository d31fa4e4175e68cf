import nodemailer from 'nodemailer';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * Payslips by e-mail: nodemailer (the SMTP client the gateway uses, gateway/src/mail.ts) to the
 * server named by `SMTP_URL`, from `MAIL_FROM`. Unset `SMTP_URL` means e-mail is not configured.
 */
export interface PayslipMail { to: string; subject: string; text: string; html: string; attachment: { filename: string; content: Buffer } }

type Transport = { sendMail(m: Record<string, unknown>): Promise<unknown> };
const transports = new Map<string, Transport>();

/** Sends one message; `null` when no SMTP server is configured. */
export function payslipMailer(env: NodeJS.ProcessEnv = process.env): ((m: PayslipMail) => Promise<void>) | null {
  const url = env.SMTP_URL;
  if (!url) return null;
  let t = transports.get(url);
  if (!t) { t = nodemailer.createTransport(url) as Transport; transports.set(url, t); }
  const from = env.MAIL_FROM ?? 'Cuadra <no-reply@cuadra.localhost>';
  const transport = t;
  return async (m) => {
    await transport.sendMail({ from, to: m.to, subject: m.subject, text: m.text, html: m.html, attachments: [{ filename: m.attachment.filename, content: m.attachment.content, contentType: 'application/pdf' }] });
  };
}

/**
 * One payslip's delivery, `<run id>:<employee id>`: claimed (`sending`) before the message
 * leaves, `sent` after. A second call skips what was sent; a failed delivery, or a claim left
 * by a crash for more than five minutes, is taken again.
 */
export interface PayslipMailingDoc {
  _id: string;
  workspace: string;
  run_id: string;
  employee_id: string;
  to: string;
  status: 'sending' | 'sent' | 'failed';
  error: string | null;
  claimed_at: Date;
  sent_at: Date | null;
}

const schema = new Schema<PayslipMailingDoc>({
  _id: String, workspace: String, run_id: String, employee_id: String, to: String, status: String, error: { type: String, default: null }, claimed_at: Date, sent_at: { type: Date, default: null },
}, { versionKey: false });

export function payslipMailings(db: Connection): Model<PayslipMailingDoc> {
  return (db.models.PayslipMailing as Model<PayslipMailingDoc> | undefined) ?? db.model<PayslipMailingDoc>('PayslipMailing', schema, 'payroll_payslip_mailings');
}

/** A claim left this long in `sending` is taken to have died with its process. */
export const STALE_CLAIM_MS = 5 * 60_000;
