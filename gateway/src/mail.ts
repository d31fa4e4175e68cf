import type { Logger } from '@cuadra/shared';
import nodemailer from 'nodemailer';

/** One outgoing message. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sends e-mail through SMTP; `null` from {@link mailerFromEnv} when none is configured. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * Outgoing mail through the SMTP server named by `SMTP_URL` (e.g. `smtp://127.0.0.1:2525`, or
 * `smtps://user:pass@host:465`), from `MAIL_FROM` (default `Cuadra <no-reply@cuadra.localhost>`).
 * nodemailer is the well-kept SMTP client; `npm start` and the tests run Debian's exim4 (scripts/smtp.ts).
 */
export function mailerFromEnv(log: Logger, env: NodeJS.ProcessEnv = process.env): Mailer | null {
  if (!env.SMTP_URL) return null;
  const transport = nodemailer.createTransport(env.SMTP_URL);
  const from = env.MAIL_FROM ?? 'Cuadra <no-reply@cuadra.localhost>';
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
      log.info({ to: mail.to, subject: mail.subject }, 'mail sent');
    },
  };
}
