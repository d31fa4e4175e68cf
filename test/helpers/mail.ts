import { randomBytes } from 'node:crypto';
import { readMaildir } from '../../scripts/smtp.ts';
import { EVENT_WAIT_MS } from './until.ts';

/**
 * Messages the real SMTP server (exim4, started by `npm test`) delivered to `to`, newest first,
 * read from its Maildir (`CUADRA_MAILDIR`).
 */
export function messagesTo(to: string): string[] {
  const maildir = process.env.CUADRA_MAILDIR;
  if (!maildir) throw new Error('CUADRA_MAILDIR is not set: run the tests with `npm test`.');
  const wanted = to.toLowerCase();
  return readMaildir(maildir)
    .map((m) => m.raw)
    .filter((raw) => /^Envelope-to: (.*)$/mi.exec(raw)?.[1].toLowerCase().split(/,\s*/).includes(wanted))
    .reverse();
}

/** The claim code e-mailed to `to` (the newest), waiting for delivery (up to EVENT_WAIT_MS). */
export async function claimCodeFor(to: string): Promise<string> {
  for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline;) {
    for (const raw of messagesTo(to)) {
      const code = /^ {4}(\d{8})\s*$/m.exec(raw)?.[1];
      if (code) return code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no claim code reached ${to}`);
}

/**
 * `address` made unique to this call (`lucia@andes.example` → `lucia.k3x9a2q1@andes.example`):
 * the people of a system and the run's one mailbox are shared by every test file, so a test that
 * signs a person up, invites one or mails one uses an address no other test uses.
 */
export function uniqueAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}.${randomBytes(4).toString('hex')}${address.slice(at)}`;
}
