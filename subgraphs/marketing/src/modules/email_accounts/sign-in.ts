import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { CuadraError } from '@cuadra/shared';
import type { EmailAccountDoc, ServerAddress } from './model.ts';
import { connectImap, imapAddress, signInToken, smtpTransport } from './servers.ts';

/*
 * How an account signs in, shared by the tools that set it (email_accounts.connect, .update) and the
 * one that checks it (email_accounts.verify): where its servers may be, which connection it may
 * sign in with, and the check itself — signing in to each server for real.
 */

/** A mail server as the tools take it; `password` is sealed at rest and never shown again. */
export const SERVER_INPUT = {
  type: 'object', additionalProperties: false, required: ['host', 'port', 'user'],
  properties: {
    host: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    secure: { type: 'boolean', description: 'TLS from the first byte (ports 465, 993); false: STARTTLS.' },
    user: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true, description: 'Sealed at rest; never shown again. Required unless the account signs in with connection_id.' },
  },
} as const;

/** The IMAP mailbox as the tools take it: a server and the folder bounces and replies arrive in. */
export const MAILBOX_INPUT = { ...SERVER_INPUT, properties: { ...SERVER_INPUT.properties, mailbox: { type: 'string', minLength: 1, maxLength: 200, description: 'Folder bounces and replies arrive in (default INBOX).' } } } as const;

/** The OAuth connection an account signs in with (XOAUTH2) as the tools take it. */
export const CONNECTION_INPUT = {
  type: 'string', minLength: 1, maxLength: 64, pattern: '^con_',
  description: 'Sign in to the SMTP and IMAP servers with XOAUTH2 (Google, Microsoft) using this OAuth connection of the workspace (connections.create, kind oauth2) instead of passwords: its access token is refreshed before it expires, and revoking it stops the account\'s sends.',
} as const;

/** The address kept for a server given as input (lower-case host; TLS from the first byte on 465 and 993 unless told). */
export function serverAddress(s: { host: string; port: number; secure?: boolean; user: string }): ServerAddress {
  return { host: s.host.toLowerCase(), port: s.port, secure: s.secure ?? (s.port === 465 || s.port === 993), user: s.user };
}

/** True for loopback, private, link-local and unspecified addresses. */
function isPrivateAddress(ip: string): boolean {
  if (ip.includes(':')) return ip === '::1' || ip === '::' || /^f[cd]/i.test(ip) || /^fe80/i.test(ip) || ip.startsWith('::ffff:') && isPrivateAddress(ip.slice(7));
  const [a, b] = ip.split('.').map(Number);
  return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

/**
 * A workspace's mail server must be on the internet: a host that is (or resolves to) a loopback or
 * private address would let a caller probe the deployment's own network. `MARKETING_ALLOW_PRIVATE_SERVERS=1`
 * lifts this where the servers are local on purpose (development, the tests).
 */
export async function checkServerHost(host: string, field: string): Promise<void> {
  if (process.env.MARKETING_ALLOW_PRIVATE_SERVERS === '1') return;
  const addresses = isIP(host) ? [host] : await lookup(host, { all: true }).then((r) => r.map((a) => a.address)).catch(() => {
    throw new CuadraError('invalid_input', `The host ${host} does not resolve.`, { field });
  });
  if (addresses.some(isPrivateAddress)) throw new CuadraError('invalid_input', `The host ${host} is a private or loopback address; use the server's public name.`, { field });
}

/** The connection an account will sign in with must be an active OAuth grant of the workspace (read once, as a sign-in reads it). */
export async function checkConnection(workspace: string, account: string, connection: string): Promise<void> {
  let kind: string;
  try {
    kind = (await signInToken({ workspace, _id: account, connection_id: connection }, 'smtp')).kind;
  } catch (err) {
    if (err instanceof CuadraError && err.code === 'conflict') throw new CuadraError('invalid_input', `No active connection ${connection} exists in this workspace.`, { field: '/connection_id' });
    throw err;
  }
  if (kind !== 'oauth2') throw new CuadraError('invalid_input', `Connection ${connection} holds an API key; XOAUTH2 signs in with an OAuth grant (kind oauth2).`, { field: '/connection_id' });
}

/** Why a connection failed, in one line without secrets (a server's greeting or the socket's error). */
function reason(err: unknown): string {
  const e = err as { code?: string; response?: string; message?: string };
  return String(e.response ?? e.message ?? e.code ?? 'no answer').replace(/\s+/g, ' ').slice(0, 200);
}

/** What stopped the account signing in, by server; null when it signed in to its SMTP server and opened its IMAP mailbox. */
export async function signInProblem(account: EmailAccountDoc): Promise<{ server: 'smtp' | 'imap'; problem: string } | null> {
  const transport = smtpTransport(account);
  try {
    await transport.verify();
  } catch (err) {
    return { server: 'smtp', problem: `SMTP: ${reason(err)}` };
  } finally {
    transport.close();
  }
  const mailbox = imapAddress(account);
  if (!mailbox) return null;
  try {
    const client = await connectImap(mailbox);
    try {
      await client.mailboxOpen(mailbox.server.mailbox, { readOnly: true });
    } finally {
      await client.logout().catch(() => undefined);
    }
  } catch (err) {
    return { server: 'imap', problem: `IMAP: ${reason(err)}` };
  }
  return null;
}
