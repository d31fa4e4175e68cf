import { CuadraError, peersFromEnv, readConnectionToken, sealerFromEnv, type ConnectionToken, type PeerConfig, type Sealer } from '@cuadra/shared';
import { ImapFlow } from 'imapflow';
import { systemMailbox } from '@cuadra/shared/mail-handover';
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { EmailAccountDoc, ServerAddress } from './model.ts';

/*
 * The servers behind an account: its SMTP transport (nodemailer, DKIM-signing every message with the
 * account's key) and its IMAP mailbox (imapflow). A `system` account uses the deployment's SMTP
 * server (`SMTP_URL`) and bounce mailbox (`MARKETING_IMAP_URL`, `MARKETING_BOUNCE_ADDRESS`).
 * An `xoauth2` account signs in to both with the access token of a workspace connection (SASL
 * XOAUTH2, as Google and Microsoft take it), read from agents — the owner of connections — at each
 * sign-in (shared/src/connection-token.ts): agents refreshes it when it is about to expire, and a
 * revoked connection fails the sign-in before anything is sent. No token is kept here.
 */

/** Context a sealed secret of an account is bound to (it opens for no other account or field). */
export function sealContext(field: 'smtp_password' | 'imap_password' | 'dkim_private_key', workspace: string, id: string): string {
  return `email_accounts.${field}:${workspace}:${id}`;
}

let sealer: Sealer | null | undefined;
/** The deployment's sealer; `unavailable` when none is configured (secrets are then never kept). */
export function accountSealer(): Sealer {
  sealer ??= sealerFromEnv();
  if (!sealer) throw new CuadraError('unavailable', 'Secrets cannot be kept here: the deployment has no seal key (CUADRA_SEAL_KEY); nothing was done.', { beforeAnyEffect: true });
  return sealer;
}

function open(account: EmailAccountDoc, field: 'smtp_password' | 'imap_password' | 'dkim_private_key', box: string | null): string {
  if (!box) return '';
  const plain = accountSealer().open(box, sealContext(field, account.workspace, account._id));
  if (plain === null) throw new CuadraError('conflict', `The ${field.replace('_', ' ')} of account ${account._id} cannot be opened with this deployment's seal key; connect the account again.`);
  return plain;
}

let peers: PeerConfig | undefined | null = null;

/**
 * The access token an `xoauth2` account signs in with, for `purpose` (`smtp`, `imap`). A connection
 * gone or revoked is `conflict`; agents unreachable or the provider refusing a refresh, `unavailable`.
 */
export async function signInToken(account: Pick<EmailAccountDoc, 'workspace' | '_id' | 'connection_id'>, purpose: 'smtp' | 'imap'): Promise<ConnectionToken> {
  if (!account.connection_id) throw new CuadraError('conflict', `E-mail account ${account._id} has no connection to sign in with.`);
  if (peers === null) peers = peersFromEnv();
  try {
    return await readConnectionToken(peers, { service: 'marketing', workspace: account.workspace, purpose }, account.connection_id);
  } catch (err) {
    if (err instanceof CuadraError && (err.code === 'conflict' || err.code === 'not_found')) {
      throw new CuadraError('conflict', `E-mail account ${account._id} signs in with connection ${account.connection_id}, which cannot be used: ${err.message}`, { beforeAnyEffect: true });
    }
    throw err;
  }
}

/** The system's bounce mailbox and envelope sender (shared with finance's notices: @cuadra/shared/mail-handover). */
export { systemMailbox };

// Every socket step ends well within a send's lease (sender.ts), so a stalled server never outlives it.
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/**
 * How a transport holds its connections: `pool` keeps up to that many SMTP connections open and sends
 * one message at a time on each (nodemailer's pool), instead of a connection per message.
 */
export interface TransportOptions { pool?: number }

/** nodemailer's pool settings for {@link TransportOptions}; nothing for a connection per message. */
function pooling(options: TransportOptions): { pool?: true; maxConnections?: number; maxMessages?: number } {
  // A connection is renewed after 100 messages (nodemailer's default), as large senders ask of their clients.
  return options.pool ? { pool: true, maxConnections: options.pool, maxMessages: 100 } : {};
}

/**
 * A password sign-in meeting a server that lists XOAUTH2 first: nodemailer takes the server's first
 * method, and with no token source its XOAUTH2 path throws outside any callback — the whole process
 * died on an outside server's greeting. This handler takes that turn instead: PLAIN when the server
 * offers it (RFC 4616), else a clean refusal (EAUTH) that names the way in that works.
 */
const PASSWORD_WHERE_XOAUTH2_IS_FIRST = {
  XOAUTH2: async (ctx: { auth: { credentials?: { user: string; pass: string } }; authMethods: string[]; sendCommand: (cmd: string) => Promise<{ status: number; response: string }> }) => {
    const { user = '', pass = '' } = ctx.auth.credentials ?? {};
    if (!ctx.authMethods.some((m) => m.toUpperCase() === 'PLAIN')) {
      throw new Error('The server offers XOAUTH2 and no PLAIN sign-in: connect this account through an OAuth connection (connection_id).');
    }
    const answer = await ctx.sendCommand(`AUTH PLAIN ${Buffer.from(`\u0000${user}\u0000${pass}`).toString('base64')}`);
    if (answer.status !== 235) throw new Error(answer.response);
  },
};

/** The deployment's SMTP server (`SMTP_URL`), signing with `dkim` when given (the system's own mail: none). */
export function systemSmtp(dkim?: { domainName: string; keySelector: string; privateKey: string; headerFieldNames: string }, options: TransportOptions = {}): Transporter {
  if (!process.env.SMTP_URL) throw new CuadraError('unavailable', 'This deployment has no SMTP server configured (SMTP_URL).', { beforeAnyEffect: true });
  const url = new URL(process.env.SMTP_URL);
  return nodemailer.createTransport({
    host: url.hostname, port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)), secure: url.protocol === 'smtps:',
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }, customAuth: PASSWORD_WHERE_XOAUTH2_IS_FIRST } : {}),
    // The deployment's own loopback relay speaks plain SMTP; anything else is offered STARTTLS by nodemailer.
    ...SMTP_TIMEOUTS, ...pooling(options), ...(dkim ? { dkim } : {}),
  });
}

/** The address the deployment's own mail comes from (`MAIL_FROM`, as the gateway sends it). */
export function systemFromAddress(env: NodeJS.ProcessEnv = process.env): string {
  const from = env.MAIL_FROM ?? 'no-reply@cuadra.localhost';
  return /<([^<>\s]+@[^<>\s]+)>/.exec(from)?.[1] ?? from;
}

/** The account's SMTP transport, signing with its DKIM key (pooled when `options.pool` is given). */
export function smtpTransport(account: EmailAccountDoc, options: TransportOptions = {}): Transporter {
  const dkim = {
    domainName: account.domain, keySelector: account.dkim.selector, privateKey: open(account, 'dkim_private_key', account.dkim.private_key_sealed),
    // The headers signed: RFC 8058 §3.1 asks that List-Unsubscribe and List-Unsubscribe-Post be covered.
    headerFieldNames: 'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:List-Unsubscribe:List-Unsubscribe-Post',
  };
  if (account.transport === 'system') return systemSmtp(dkim, options);
  const s = account.smtp!;
  return nodemailer.createTransport({
    host: s.host, port: s.port, secure: s.secure, auth: smtpAuth(account, s.user), ...SMTP_TIMEOUTS, ...pooling(options), dkim,
    ...(account.auth === 'xoauth2' ? {} : { customAuth: PASSWORD_WHERE_XOAUTH2_IS_FIRST }),
  });
}

/** How the account signs in to its SMTP server: its password, or XOAUTH2 with a token asked for at each sign-in (nodemailer caches it until it expires). */
function smtpAuth(account: EmailAccountDoc, user: string): SMTPConnection.AuthenticationType {
  if (account.auth !== 'xoauth2') return { user, pass: open(account, 'smtp_password', account.smtp_password_sealed) };
  return {
    type: 'OAuth2', user,
    provisionCallback: (_user, _renew, done) => {
      signInToken(account, 'smtp').then((t) => done(null, t.access_token, t.expires_at ? Date.parse(t.expires_at) : 0), (err: Error) => done(err, '', 0));
    },
  };
}

/** An IMAP mailbox and how to sign in to it: a password, or XOAUTH2 with the account's connection. */
export type MailboxAddress = { server: ServerAddress & { mailbox: string } } & ({ password: string } | { xoauth2: EmailAccountDoc });

/** The account's bounce and reply mailbox, or null when it has none. */
export function imapAddress(account: EmailAccountDoc): MailboxAddress | null {
  if (account.transport === 'system') {
    const sys = systemMailbox();
    return sys ? { server: sys.imap, password: sys.password } : null;
  }
  if (!account.imap) return null;
  return account.auth === 'xoauth2' ? { server: account.imap, xoauth2: account } : { server: account.imap, password: open(account, 'imap_password', account.imap_password_sealed) };
}

/** A connected IMAP client on the account's mailbox; the caller logs out. */
export async function connectImap(address: MailboxAddress): Promise<ImapFlow> {
  // imapflow signs in with AUTHENTICATE OAUTHBEARER or XOAUTH2 (whichever the server offers) when given a token.
  const auth = 'xoauth2' in address ? { user: address.server.user, accessToken: (await signInToken(address.xoauth2, 'imap')).access_token } : { user: address.server.user, pass: address.password };
  const client = new ImapFlow({
    host: address.server.host, port: address.server.port, secure: address.server.secure,
    auth, logger: false,
    // Loopback and test servers speak plain IMAP; anything else must offer TLS.
    doSTARTTLS: address.server.secure ? undefined : !['127.0.0.1', 'localhost', '::1'].includes(address.server.host),
    connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000,
  } as ConstructorParameters<typeof ImapFlow>[0]);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
