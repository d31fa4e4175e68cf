import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, accountView, emailAccounts, REPLY_TO_INPUT, type EmailAccountDoc } from '../model.ts';
import { accountSealer, sealContext, systemMailbox } from '../servers.ts';
import { checkConnection, checkServerHost, CONNECTION_INPUT, MAILBOX_INPUT, SERVER_INPUT, serverAddress } from '../sign-in.ts';

/** A DKIM key pair for a sending domain: RSA 2048 (RFC 8301's floor is 1024; 2048 fits one TXT record in 255-byte strings). */
function dkimKeyPair(): { publicKey: string; privateKey: string } {
  return generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
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
      reply_to: REPLY_TO_INPUT,
      smtp: SERVER_INPUT,
      imap: MAILBOX_INPUT,
      bounce_address: { type: 'string', format: 'email', maxLength: 254, description: 'Envelope sender whose mail reaches the IMAP mailbox (default the IMAP user when it is an address).' },
      rate_per_minute: { type: 'integer', minimum: 1, maximum: 6000, description: 'Messages per minute at most (default 60).' },
      connection_id: CONNECTION_INPUT,
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
      from_email: input.from_email.toLowerCase(), from_name: (input.from_name ?? input.name).trim(), reply_to: input.reply_to?.toLowerCase() ?? null, domain,
      transport: input.smtp ? 'smtp' : 'system',
      smtp: input.smtp ? serverAddress(input.smtp) : null,
      auth: xoauth2 ? 'xoauth2' : 'password', connection_id: input.connection_id ?? null,
      smtp_password_sealed: input.smtp?.password ? sealer.seal(input.smtp.password, sealContext('smtp_password', ctx.workspace, id)) : null,
      imap: input.imap ? { ...serverAddress(input.imap), mailbox: input.imap.mailbox ?? 'INBOX' } : null,
      imap_password_sealed: input.imap?.password ? sealer.seal(input.imap.password, sealContext('imap_password', ctx.workspace, id)) : null,
      bounce_address: bounce,
      dkim: { selector: `cuadra${randomBytes(4).toString('hex')}`, public_key: keys.publicKey, private_key_sealed: sealer.seal(keys.privateKey, sealContext('dkim_private_key', ctx.workspace, id)) },
      rate_per_minute: input.rate_per_minute ?? 60,
      status: 'unverified', revision: 0, verified_at: null, last_error: null, removed_at: null,
      created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(emailAccounts(ctx.db), doc);
    return { account: accountView(doc) };
  },
});
