import { readMaildir } from '../../scripts/smtp.ts';

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

/** The claim code e-mailed to `to` (the newest), waiting up to 10 s for delivery. */
export async function claimCodeFor(to: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    for (const raw of messagesTo(to)) {
      const code = /^ {4}(\d{8})\s*$/m.exec(raw)?.[1];
      if (code) return code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no claim code reached ${to}`);
}
