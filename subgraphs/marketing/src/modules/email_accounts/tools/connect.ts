import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, accountView, emailAccounts, type EmailAccountDoc, type ServerAddress } from '../model.ts';
import { accountSealer, sealContext, signInToken, systemMailbox } from '../servers.ts';

const SERVER = {
  type: 'object', additionalProperties: false, required: ['host', 'port', 'user'],
  properties: {
    host: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    secure: { type: 'boolean', description: 'TLS from the first byte (ports 465, 993); false: STARTTLS.' },
    user: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true, description: 'Sealed at rest; never shown again. Required unless the account signs in with connection_id.' },
  },
} as const;

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
async function checkServerHost(host: string, field: string): Promise<void> {
  if (process.env.MARKETING_ALLOW_PRIVATE_SERVERS === '1') return;
  const addresses = isIP(host) ? [host] : await lookup(host, { all: true }).then((r) => r.map((a) => a.address)).catch(() => {
    throw new CuadraError('invalid_input', `The host ${host} does not resolve.`, { field });
  });
  if (addresses.some(isPrivateAddress)) throw new CuadraError('invalid_input', `The host ${host} is a private or loopback address; use the server's public name.`, { field });
}

/** A DKIM key pair for a sending domain: RSA 2048 (RFC 8301's floor is 1024; 2048 fits one TXT record in 255-byte strings). */
function dkimKeyPair(): { publicKey: string; privateKey: string } {
  return generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
}

/** The connection an account will sign in with must be an active OAuth grant of the workspace (read once, as a sign-in reads it). */
async function checkConnection(workspace: string, account: string, connection: string): Promise<void> {
  let kind: string;
  try {
    kind = (await signInToken({ workspace, _id: account, connection_id: connection }, 'smtp')).kind;
  } catch (err) {
    if (err instanceof CuadraError && err.code === 'conflict') throw new CuadraError('invalid_input', `No active connection ${connection} exists in this workspace.`, { field: '/connection_id' });
    throw err;
  }
  if (kind !== 'oauth2') throw new CuadraError('invalid_input', `Connection ${connection} holds an API key; XOAUTH2 signs in with an OAuth grant (kind oauth2).`, { field: '/connection_id' });
}

/** Connects an e-mail account: the system's server by default, or the workspace's SMTP (and IMAP) with sealed passwords. */
export const connect = defineTool({
  name: 'email_accounts.connect',
  description: 'Connect an e-mail account to send campaigns from: the From address and name, and either the system\'s SMTP server (default; bounces come back to the system\'s mailbox) or the workspace\'s own SMTP server with its IMAP mailbox for bounces and replies, signing in with passwords (sealed, never shown) or with XOAUTH2 and an OAuth connection of the workspace (connection_id). A DKIM key pair is made for the sending domain; the answer lists the SPF, DKIM and DMARC records to publish. Check it with email_accounts.verify.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'from_email'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      from_email: { type: 'string', format: 'email', maxLength: 254 },
      from_name: { type: 'string', minLength: 1, maxLength: 100 },
      smtp: SERVER,
      imap: { ...SERVER, properties: { ...SERVER.properties, mailbox: { type: 'string', minLength: 1, maxLength: 200, description: 'Folder bounces and replies arrive in (default INBOX).' } } },
      bounce_address: { type: 'string', format: 'email', maxLength: 254, description: 'Envelope sender whose mail reaches the IMAP mailbox (default the IMAP user when it is an address).' },
      rate_per_minute: { type: 'integer', minimum: 1, maximum: 6000, description: 'Messages per minute at most (default 60).' },
      connection_id: {
        type: 'string', minLength: 1, maxLength: 64, pattern: '^con_',
        description: 'Sign in to the SMTP and IMAP servers with XOAUTH2 (Google, Microsoft) using this OAuth connection of the workspace (connections.create, kind oauth2) instead of passwords: its access token is refreshed before it expires, and revoking it stops the account\'s sends.',
      },
    },
    dependentRequired: { imap: ['smtp'], bounce_address: ['imap'], connection_id: ['smtp'] },
  },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const sealer = accountSealer();
    const id = newId('eac');
    const domain = input.from_email.split('@')[1].toLowerCase();
    const xoauth2 = input.connection_id !== undefined;
    for (const [server, at] of [[input.smtp, '/smtp'], [input.imap, '/imap']] as const) {
      if (!server) continue;
      if (xoauth2 && server.password !== undefined) throw new CuadraError('invalid_input', 'This account signs in with its connection\'s token (XOAUTH2): give no password.', { field: `${at}/password` });
      if (!xoauth2 && server.password === undefined) throw new CuadraError('invalid_input', 'Give the server\'s password, or a connection_id to sign in with XOAUTH2.', { field: `${at}/password` });
      await checkServerHost(server.host, `${at}/host`);
    }
    if (xoauth2) await checkConnection(ctx.workspace, id, input.connection_id!);
    const address = (s: { host: string; port: number; secure?: boolean; user: string }): ServerAddress => ({ host: s.host.toLowerCase(), port: s.port, secure: s.secure ?? (s.port === 465 || s.port === 993), user: s.user });
    let bounce: string | null = null;
    if (input.imap) {
      bounce = input.bounce_address ?? (input.imap.user.includes('@') ? input.imap.user : null);
      if (!bounce) throw new CuadraError('invalid_input', 'Give the bounce address whose mail reaches this IMAP mailbox (the IMAP user is not an address).', { field: '/bounce_address' });
    } else if (!input.smtp) {
      bounce = systemMailbox()?.bounceAddress ?? null;
    }
    const keys = dkimKeyPair();
    const doc: EmailAccountDoc = {
      _id: id, workspace: ctx.workspace, name: input.name.trim(), name_lc: input.name.trim().toLowerCase(),
      from_email: input.from_email.toLowerCase(), from_name: (input.from_name ?? input.name).trim(), domain,
      transport: input.smtp ? 'smtp' : 'system',
      smtp: input.smtp ? address(input.smtp) : null,
      auth: xoauth2 ? 'xoauth2' : 'password', connection_id: input.connection_id ?? null,
      smtp_password_sealed: input.smtp?.password ? sealer.seal(input.smtp.password, sealContext('smtp_password', ctx.workspace, id)) : null,
      imap: input.imap ? { ...address(input.imap), mailbox: input.imap.mailbox ?? 'INBOX' } : null,
      imap_password_sealed: input.imap?.password ? sealer.seal(input.imap.password, sealContext('imap_password', ctx.workspace, id)) : null,
      bounce_address: bounce,
      dkim: { selector: `cuadra${randomBytes(4).toString('hex')}`, public_key: keys.publicKey, private_key_sealed: sealer.seal(keys.privateKey, sealContext('dkim_private_key', ctx.workspace, id)) },
      rate_per_minute: input.rate_per_minute ?? 60,
      status: 'unverified', verified_at: null, last_error: null, removed_at: null,
      created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(emailAccounts(ctx.db), doc);
    return { account: accountView(doc) };
  },
});
