import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, accountView, emailAccounts, REPLY_TO_INPUT, type EmailAccountDoc, type ServerAddress } from '../model.ts';
import { accountSealer, sealContext } from '../servers.ts';
import { checkConnection, checkServerHost, CONNECTION_INPUT, MAILBOX_INPUT, SERVER_INPUT, serverAddress, signInProblem } from '../sign-in.ts';

/** A server's settings to change: any of them, none required (the rest stay as they are). */
const partial = <S extends { properties: object }>(server: S) => ({ ...server, required: [], minProperties: 1 }) as const;

type ServerChange = { host?: string; port?: number; secure?: boolean; user?: string; password?: string };
type Input = {
  id: string; name?: string; from_name?: string; reply_to?: string | null; rate_per_minute?: number;
  connection_id?: string | null; smtp?: ServerChange; imap?: ServerChange & { mailbox?: string };
};

/** A server's address with the changes given (a new port without `secure` takes the port's usual TLS). */
function changed(server: ServerAddress, change: ServerChange | undefined): ServerAddress {
  if (!change) return server;
  return serverAddress({ host: change.host ?? server.host, port: change.port ?? server.port, secure: change.secure ?? (change.port === undefined ? server.secure : undefined), user: change.user ?? server.user });
}

/**
 * How the account will sign in after the change: its servers, `auth`, connection and sealed passwords.
 * Refuses at the field what cannot be: a system account's sign-in (the deployment's, not the
 * workspace's), a password beside a connection, a move to passwords without them.
 */
async function changedSignIn(current: EmailAccountDoc, input: Input, workspace: string): Promise<Partial<EmailAccountDoc>> {
  if (current.transport === 'system') {
    const at = input.connection_id !== undefined ? '/connection_id' : input.smtp ? '/smtp' : '/imap';
    throw new CuadraError('invalid_input', 'This account sends through the deployment\'s own server, which signs in by itself; connect an account with the workspace\'s servers to choose how it signs in.', { field: at });
  }
  if (input.imap && !current.imap) throw new CuadraError('invalid_input', 'This account has no IMAP mailbox to change; connect a new account with one.', { field: '/imap' });
  const xoauth2 = input.connection_id !== undefined ? input.connection_id !== null : current.auth === 'xoauth2';
  for (const [change, at] of [[input.smtp, '/smtp'], [input.imap, '/imap']] as const) {
    if (xoauth2 && change?.password !== undefined) throw new CuadraError('invalid_input', 'This account signs in with its connection\'s token (XOAUTH2): give no password.', { field: `${at}/password` });
    if (change?.host !== undefined) await checkServerHost(change.host, `${at}/host`);
  }
  const connection = xoauth2 ? (input.connection_id ?? current.connection_id!) : null;
  if (connection && input.connection_id) await checkConnection(workspace, current._id, connection);
  const sealer = accountSealer();
  /** A server's sealed password: the new one, the one kept, or none under XOAUTH2. */
  const password = (field: 'smtp_password' | 'imap_password', change: ServerChange | undefined, kept: string | null, at: string): string | null => {
    if (xoauth2) return null;
    if (change?.password !== undefined) return sealer.seal(change.password, sealContext(field, workspace, current._id));
    if (current.auth === 'xoauth2') throw new CuadraError('invalid_input', 'Signing in with passwords again: give the server\'s password.', { field: at });
    return kept;
  };
  return {
    auth: xoauth2 ? 'xoauth2' : 'password', connection_id: connection,
    smtp: changed(current.smtp!, input.smtp),
    smtp_password_sealed: password('smtp_password', input.smtp, current.smtp_password_sealed, '/smtp/password'),
    imap: current.imap ? { ...changed(current.imap, input.imap), mailbox: input.imap?.mailbox ?? current.imap.mailbox } : null,
    imap_password_sealed: current.imap ? password('imap_password', input.imap, current.imap_password_sealed, '/imap/password') : null,
  };
}

/** The input a server's refused sign-in points at: the connection when it changed, else that server's settings. */
function refusedAt(server: 'smtp' | 'imap', input: Input): string {
  if (typeof input.connection_id === 'string') return '/connection_id';
  return input[server]?.password !== undefined ? `/${server}/password` : `/${server}`;
}

/**
 * Changes an account: its name, sender name, Reply-To and rate, and how it signs in (another OAuth
 * connection, passwords instead of one or back, a server's address or password). A change of how it
 * signs in is checked by signing in to its servers first and kept only if that works — a typo never
 * breaks an account that was sending. One conditional write, over the revision read.
 */
export const update = defineTool({
  name: 'email_accounts.update',
  description: 'Change an e-mail account: its name, sender name, Reply-To address and rate, or how it signs in — another OAuth connection (connection_id), passwords instead of a connection (connection_id null, with the passwords), or a server\'s host, port, user or password (sealed, never shown). A change of how it signs in is checked by signing in to its SMTP server and IMAP mailbox first; if that fails, nothing changes and the answer says why. A campaign paused because its account could not sign in resumes with email_campaigns.send.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: {
      id: ID_SCHEMA,
      name: { type: 'string', minLength: 1, maxLength: 100 },
      from_name: { type: 'string', minLength: 1, maxLength: 100 },
      reply_to: { anyOf: [REPLY_TO_INPUT, { type: 'null', description: 'Replies go to the From address.' }] },
      rate_per_minute: { type: 'integer', minimum: 1, maximum: 6000 },
      connection_id: { anyOf: [CONNECTION_INPUT, { type: 'null', description: 'Sign in with passwords again (give smtp.password and, with a mailbox, imap.password).' }] },
      smtp: partial(SERVER_INPUT),
      imap: partial(MAILBOX_INPUT),
    },
  },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const current = await emailAccounts(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, removed_at: null }).lean();
    if (!current) throw new CuadraError('not_found', `No e-mail account ${input.id} exists in this workspace.`);
    const set: Partial<EmailAccountDoc> = { updated_at: ctx.now, revision: (current.revision ?? 0) + 1 };
    if (input.name !== undefined) Object.assign(set, { name: input.name.trim(), name_lc: input.name.trim().toLowerCase() });
    if (input.from_name !== undefined) set.from_name = input.from_name.trim();
    if (input.reply_to !== undefined) set.reply_to = input.reply_to?.toLowerCase() ?? null;
    if (input.rate_per_minute !== undefined) set.rate_per_minute = input.rate_per_minute;
    if (input.connection_id !== undefined || input.smtp || input.imap) {
      Object.assign(set, await changedSignIn(current, input, ctx.workspace));
      const refused = await signInProblem({ ...current, ...set });
      if (refused) throw new CuadraError('invalid_input', `Nothing was changed: with these settings the account cannot sign in. ${refused.problem}`, { field: refusedAt(refused.server, input) });
      Object.assign(set, { status: 'verified', verified_at: ctx.now, last_error: null });
    }
    const after = await emailAccounts(ctx.db).findOneAndUpdate(
      { _id: current._id, workspace: ctx.workspace, removed_at: null, revision: current.revision ?? null },
      { $set: set },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('conflict', `E-mail account ${input.id} changed meanwhile (updated or removed); read it again.`);
    return { account: accountView(after) };
  },
});
