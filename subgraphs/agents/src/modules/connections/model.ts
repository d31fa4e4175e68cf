import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * A credential to an outside service (issue 37), as stored: an API key or bearer token, or an
 * OAuth 2 grant (access and refresh tokens, the token endpoint and client) that is refreshed
 * before it expires. Every secret is sealed (AES-256-GCM, `CUADRA_SEAL_KEY`, bound to this record
 * and field); none is ever shown again. Used by MCP servers and by e-mail accounts (XOAUTH2, through token-route.ts).
 */
export interface ConnectionDoc {
  _id: string;
  workspace: string;
  name: string;
  name_lc: string;
  /** What it reaches, in words ("Google Drive", "files MCP"). */
  service: string;
  kind: 'api_key' | 'oauth2';
  /** The scopes it was granted (OAuth) or is meant for: shown, never widened here. */
  scopes: string[];
  /** The API key, or the OAuth access token, sealed. */
  secret_sealed: string;
  oauth: {
    token_url: string;
    client_id: string;
    client_secret_sealed: string | null;
    refresh_token_sealed: string | null;
    expires_at: Date | null;
  } | null;
  status: 'active' | 'revoked';
  revoked_at: Date | null;
  last_refreshed_at: Date | null;
  /** Why the last refresh failed, if it did (the connection then needs a new grant). */
  refresh_error: string | null;
  /** The last time another service read its token (token-route.ts), which one and what for (`marketing:smtp`), and how many reads so far. */
  last_used_at?: Date | null;
  last_used_by?: string | null;
  uses?: number;
  created_at: Date;
  updated_at: Date;
}

const connectionSchema = new Schema<ConnectionDoc>(
  {
    _id: { type: String, required: true }, workspace: { type: String, required: true }, name: { type: String, required: true }, name_lc: { type: String, required: true },
    service: { type: String, required: true }, kind: { type: String, required: true }, scopes: { type: [String], default: [] },
    secret_sealed: { type: String, required: true }, oauth: { type: Schema.Types.Mixed, default: null }, status: { type: String, required: true },
    revoked_at: { type: Date, default: null }, last_refreshed_at: { type: Date, default: null }, refresh_error: { type: String, default: null },
    last_used_at: { type: Date, default: null }, last_used_by: { type: String, default: null }, uses: { type: Number, default: 0 },
    created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
connectionSchema.index({ workspace: 1, name_lc: 1 }, { unique: true });
addPositions(connectionSchema);

/** The connections collection. */
export function connections(db: Connection): Model<ConnectionDoc> {
  return modelOn<ConnectionDoc>(db, 'Connection', connectionSchema, 'connections');
}

/** What a sealed field of a connection is bound to. */
export function secretContext(workspace: string, id: string, field: string): string {
  return `connections.${field}:${workspace}:${id}`;
}

/** JSON Schema of {@link connectionView}: never a secret. */
export const CONNECTION_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'service', 'kind', 'scopes', 'status', 'token_url', 'expires_at', 'refreshable', 'last_refreshed_at', 'refresh_error', 'revoked_at', 'last_used_at', 'last_used_by', 'uses', 'created_at'],
  properties: {
    id: TEXT, name: TEXT, service: TEXT, kind: { enum: ['api_key', 'oauth2'] }, scopes: { type: 'array', items: TEXT }, status: { enum: ['active', 'revoked'] },
    token_url: NULLABLE_TEXT, expires_at: { anyOf: [DATE_TIME, { type: 'null' }] }, refreshable: { type: 'boolean' },
    last_refreshed_at: { anyOf: [DATE_TIME, { type: 'null' }] }, refresh_error: NULLABLE_TEXT, revoked_at: { anyOf: [DATE_TIME, { type: 'null' }] },
    last_used_at: { anyOf: [DATE_TIME, { type: 'null' }], description: 'When another service of the deployment last read its token (an e-mail account signing in).' },
    last_used_by: { ...NULLABLE_TEXT, description: 'Which service read it last, and what for (marketing:smtp, marketing:imap).' },
    uses: { type: 'integer', description: 'How many times other services have read its token.' },
    created_at: DATE_TIME,
  },
} as const;

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

/** The public shape of a connection: what it is and its state, never a key or token. */
export function connectionView(c: ConnectionDoc) {
  return {
    id: c._id, name: c.name, service: c.service, kind: c.kind, scopes: c.scopes, status: c.status, token_url: c.oauth?.token_url ?? null, expires_at: iso(c.oauth?.expires_at),
    refreshable: Boolean(c.oauth?.refresh_token_sealed), last_refreshed_at: iso(c.last_refreshed_at), refresh_error: c.refresh_error, revoked_at: iso(c.revoked_at),
    last_used_at: iso(c.last_used_at), last_used_by: c.last_used_by ?? null, uses: c.uses ?? 0, created_at: iso(c.created_at)!,
  };
}

/** Search over name and service. */
export function connectionMatches(c: ConnectionDoc, needle: string): boolean {
  return c.name_lc.includes(needle) || containsText(c.service, needle);
}
