import nodemailer from 'nodemailer';

type Transport = { sendMail(m: Record<string, unknown>): Promise<unknown> };
const transports = new Map<string, Transport>();

/** The sender every calendar message comes from (`MAIL_FROM`, else a no-reply address). */
export function mailFrom(env: NodeJS.ProcessEnv = process.env): string {
  return env.MAIL_FROM ?? 'Cuadra <no-reply@cuadra.localhost>';
}

/**
 * Hands a message (nodemailer's fields) to the SMTP server of `SMTP_URL`, one pooled transport per
 * URL; resolves once the server accepted it. False when mail is not configured.
 */
export async function sendCalendarMail(message: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const url = env.SMTP_URL;
  if (!url) return false;
  let t = transports.get(url);
  if (!t) {
    t = nodemailer.createTransport(url) as Transport;
    transports.set(url, t);
  }
  await t.sendMail({ from: mailFrom(env), ...message });
  return true;
}
