import { ImapFlow } from 'imapflow';

/*
 * Proof that an SMTP server took a message, for senders that must send exactly one message across a
 * crash (marketing's campaign sender, finance's dunning notices).
 *
 * The one window no SMTP client can close (RFC 1047): the server has taken the message (its 250 to
 * the end of DATA) and the process dies before it records `sent`. So every message goes, in the same
 * SMTP transaction, to one more recipient — a copy to the sender's own bounce mailbox
 * (`<local>+copy@…`) — and a transaction is taken for all its accepted recipients or for none (RFC
 * 5321 §4.1.1.4: one reply to the end of data). The copy in the mailbox, found over IMAP by the
 * message's Message-ID, proves the hand-over; no copy after a grace period (local delivery takes
 * milliseconds) means it was never taken, and the message is sent again with the same Message-ID.
 */

/** The tag of a copy kept as proof of hand-over. */
export const HANDOVER_COPY_TAG = 'copy';

/** `local+tag@domain`: mail to it reaches `local@domain`'s mailbox, and the tag says what it is about. */
export function taggedAddress(address: string, tag: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}+${tag}@${address.slice(at + 1)}`;
}

/** An IMAP server and the mailbox read there. */
export interface ImapMailboxAddress { host: string; port: number; secure: boolean; user: string; mailbox: string }

/** The deployment's bounce mailbox (`MARKETING_IMAP_URL`) and the envelope sender it receives for (`MARKETING_BOUNCE_ADDRESS`). */
export interface SystemMailbox { imap: ImapMailboxAddress; password: string; bounceAddress: string }

/** The system's bounce mailbox and envelope sender, from the environment; null when not configured. */
export function systemMailbox(env: NodeJS.ProcessEnv = process.env): SystemMailbox | null {
  if (!env.MARKETING_IMAP_URL || !env.MARKETING_BOUNCE_ADDRESS) return null;
  const url = new URL(env.MARKETING_IMAP_URL);
  return {
    imap: { host: url.hostname, port: Number(url.port || (url.protocol === 'imaps:' ? 993 : 143)), secure: url.protocol === 'imaps:', user: decodeURIComponent(url.username), mailbox: 'INBOX' },
    password: decodeURIComponent(url.password),
    bounceAddress: env.MARKETING_BOUNCE_ADDRESS,
  };
}

/**
 * Whether the copy of the message `messageId` is in `mailbox` (an IMAP SEARCH on its Message-ID
 * header, RFC 3501 §6.4.4): true proves the SMTP server took the message.
 */
export async function handoverCopyFound(mailbox: SystemMailbox, messageId: string): Promise<boolean> {
  const { imap } = mailbox;
  const client = new ImapFlow({
    host: imap.host, port: imap.port, secure: imap.secure, auth: { user: imap.user, pass: mailbox.password }, logger: false,
    // Loopback servers speak plain IMAP; anything else must offer TLS.
    doSTARTTLS: imap.secure ? undefined : !['127.0.0.1', 'localhost', '::1'].includes(imap.host),
    connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000,
  } as ConstructorParameters<typeof ImapFlow>[0]);
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.mailboxOpen(imap.mailbox, { readOnly: true });
    const found = await client.search({ header: { 'message-id': messageId } }, { uid: true });
    return Array.isArray(found) && found.length > 0;
  } finally {
    await client.logout().catch(() => undefined);
  }
}
