import { addPositions, DATE_TIME_SCHEMA, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Where an account's mail server is: host, port, TLS from the first byte (`secure`) and the user. */
export interface ServerAddress { host: string; port: number; secure: boolean; user: string }

/** An e-mail account a workspace sends campaigns from (and reads their bounces and replies with). */
export interface EmailAccountDoc {
  _id: string;
  workspace: string;
  name: string;
  name_lc: string;
  from_email: string;
  from_name: string;
  /** Where replies go (the message's Reply-To); null: to the From address. */
  reply_to?: string | null;
  /** The sending domain (of `from_email`), lower case: what the DKIM key and the DNS records are for. */
  domain: string;
  /** `system`: the deployment's own SMTP server and bounce mailbox; `smtp`: the workspace's servers. */
  transport: 'system' | 'smtp';
  smtp: ServerAddress | null;
  /** How it signs in to its servers: with passwords (sealed here), or with XOAUTH2 and the access token of a workspace connection (kept by agents). Absent: `password`. */
  auth?: 'password' | 'xoauth2';
  /** The connection (agents' `connections`, kind oauth2) an `xoauth2` account signs in with. */
  connection_id?: string | null;
  /** Sealed with the deployment's seal key, bound to the account (never shown, never stored plain). */
  smtp_password_sealed: string | null;
  /** The mailbox bounces and replies arrive in; null: none (then a message whose hand-over was cut short is never sent again). */
  imap: (ServerAddress & { mailbox: string }) | null;
  imap_password_sealed: string | null;
  /** Envelope sender (Return-Path): `<local>+<tag>@<domain>` reaches the IMAP mailbox, so bounces name the message they concern. */
  bounce_address: string | null;
  dkim: { selector: string; public_key: string; private_key_sealed: string };
  /** Messages per minute this account sends at most (every marketing process together). */
  rate_per_minute: number;
  status: 'unverified' | 'verified' | 'failed';
  /** Raised by every change of the account (email_accounts.update): a check of an older revision is never written over a newer one, and a sender renews its connections. Absent: 0. */
  revision?: number;
  verified_at: Date | null;
  last_error: string | null;
  removed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const accountSchema = new Schema<EmailAccountDoc>({
  _id: { type: String, required: true },
  workspace: { type: String, required: true },
  name: String, name_lc: String, from_email: String, from_name: String, reply_to: { type: String, default: null }, domain: String, transport: String,
  smtp: { type: Schema.Types.Mixed, default: null },
  auth: { type: String, default: 'password' }, connection_id: { type: String, default: null },
  smtp_password_sealed: { type: String, default: null },
  imap: { type: Schema.Types.Mixed, default: null },
  imap_password_sealed: { type: String, default: null },
  bounce_address: { type: String, default: null },
  dkim: { type: Schema.Types.Mixed, required: true },
  rate_per_minute: Number,
  status: String,
  revision: { type: Number, default: 0 },
  verified_at: { type: Date, default: null },
  last_error: { type: String, default: null },
  removed_at: { type: Date, default: null },
  created_at: Date, updated_at: Date,
}, { versionKey: false });
addPositions(accountSchema);

/** The email_accounts collection. */
export function emailAccounts(db: Connection): Model<EmailAccountDoc> {
  return modelOn<EmailAccountDoc>(db, 'EmailAccount', accountSchema, 'email_accounts');
}

/** A DNS record the owner publishes for the sending domain. */
export interface DnsRecord { type: 'TXT'; name: string; value: string; purpose: 'spf' | 'dkim' | 'dmarc' }

/** The Reply-To address as the tools take it. */
export const REPLY_TO_INPUT = { type: 'string', format: 'email', maxLength: 254, description: 'Where replies go (the Reply-To of every message); default the From address. Give the IMAP mailbox\'s address to have replies marked on the rows.' } as const;

const SERVER_VIEW = { type: 'object', additionalProperties: false, required: ['host', 'port', 'secure', 'user'], properties: { host: TEXT, port: { type: 'integer' }, secure: { type: 'boolean' }, user: TEXT, mailbox: TEXT } } as const;

/** JSON Schema of {@link accountView}. Passwords and the private key never appear. */
export const ACCOUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'from_email', 'from_name', 'reply_to', 'domain', 'transport', 'auth', 'connection_id', 'smtp', 'imap', 'bounce_address', 'rate_per_minute', 'status', 'verified_at', 'last_error', 'dns_records', 'created_at'],
  properties: {
    id: TEXT, name: TEXT, from_email: TEXT, from_name: TEXT, reply_to: NULLABLE_TEXT, domain: TEXT,
    transport: { enum: ['system', 'smtp'] },
    auth: { enum: ['password', 'xoauth2'], description: 'How it signs in to its servers: passwords, or XOAUTH2 with a connection\'s token.' },
    connection_id: { ...NULLABLE_TEXT, description: 'The OAuth connection an xoauth2 account signs in with.' },
    smtp: { anyOf: [{ type: 'null' }, SERVER_VIEW] },
    imap: { anyOf: [{ type: 'null' }, SERVER_VIEW] },
    bounce_address: NULLABLE_TEXT,
    rate_per_minute: { type: 'integer' },
    status: { enum: ['unverified', 'verified', 'failed'] },
    verified_at: { anyOf: [{ type: 'null' }, DATE_TIME_SCHEMA] },
    last_error: NULLABLE_TEXT,
    dns_records: {
      type: 'array', description: 'The SPF, DKIM and DMARC records to publish in the sending domain\'s DNS.',
      items: { type: 'object', additionalProperties: false, required: ['type', 'name', 'value', 'purpose'], properties: { type: { const: 'TXT' }, name: TEXT, value: TEXT, purpose: { enum: ['spf', 'dkim', 'dmarc'] } } },
    },
    created_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The SPF, DKIM and DMARC TXT records of an account's sending domain. */
export function dnsRecords(a: Pick<EmailAccountDoc, 'domain' | 'dkim' | 'transport' | 'smtp' | 'from_email'>, env: NodeJS.ProcessEnv = process.env): DnsRecord[] {
  // The server that hands the mail over is what SPF authorises: the workspace's SMTP host, or the deployment's.
  const spfSource = a.transport === 'smtp' && a.smtp ? `a:${a.smtp.host}` : `include:${env.MARKETING_SPF_INCLUDE ?? new URL(env.PUBLIC_URL ?? 'http://127.0.0.1').hostname}`;
  const publicKey = a.dkim.public_key.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return [
    { type: 'TXT', name: a.domain, value: `v=spf1 ${spfSource} ~all`, purpose: 'spf' },
    { type: 'TXT', name: `${a.dkim.selector}._domainkey.${a.domain}`, value: `v=DKIM1; k=rsa; p=${publicKey}`, purpose: 'dkim' },
    // Strict DKIM alignment (we sign with the From domain); reports to the sender's own address.
    { type: 'TXT', name: `_dmarc.${a.domain}`, value: `v=DMARC1; p=quarantine; adkim=s; aspf=r; rua=mailto:${a.from_email}`, purpose: 'dmarc' },
  ];
}

/** The public shape of an account. */
export function accountView(a: EmailAccountDoc) {
  const server = (s: ServerAddress | null) => (s ? { host: s.host, port: s.port, secure: s.secure, user: s.user, ...('mailbox' in s ? { mailbox: (s as { mailbox: string }).mailbox } : {}) } : null);
  return {
    id: a._id, name: a.name, from_email: a.from_email, from_name: a.from_name, reply_to: a.reply_to ?? null, domain: a.domain, transport: a.transport,
    auth: a.auth ?? 'password', connection_id: a.connection_id ?? null,
    smtp: server(a.smtp), imap: server(a.imap), bounce_address: a.bounce_address, rate_per_minute: a.rate_per_minute,
    status: a.status, verified_at: a.verified_at?.toISOString() ?? null, last_error: a.last_error,
    dns_records: dnsRecords(a), created_at: a.created_at.toISOString(),
  };
}
