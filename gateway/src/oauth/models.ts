import { Schema, type Connection, type Model } from 'mongoose';

/** A client registered at /oauth/register (RFC 7591). Clients named by a metadata document URL are not stored. */
export interface ClientDoc {
  _id: string;
  client_name: string;
  client_uri: string | null;
  redirect_uris: string[];
  /** `none` = public client (PKCE only); the others = confidential, with a secret. */
  token_endpoint_auth_method: 'none' | 'client_secret_basic' | 'client_secret_post';
  /** Hex SHA-256 of the client secret; null for public clients. The secret is shown once. */
  secret_hash: string | null;
  grant_types: string[];
  created_at: Date;
}

/** An authorization code, stored as its SHA-256; lives 60 s and works once. */
export interface CodeDoc {
  _id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  scope: string;
  /** RFC 8707 resource: becomes the access token's `aud`. */
  resource: string;
  user: string;
  workspace: string;
  /** The grant the exchange opens; chosen up front so a reused code can revoke it. */
  grant: string;
  expires_at: Date;
  used_at: Date | null;
}

/** What a person allowed a client: one chain of refresh tokens and the access tokens they issue. */
export interface GrantDoc {
  _id: string;
  client_id: string;
  user: string;
  workspace: string;
  scope: string;
  resource: string;
  created_at: Date;
  /** Set on revocation (RFC 7009), on a reused code and on a reused refresh token. */
  revoked_at: Date | null;
  revoked_reason: string | null;
}

/** A refresh token, stored as its SHA-256. Used once: each use issues the next one. */
export interface RefreshTokenDoc {
  _id: string;
  grant: string;
  client_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

const clientSchema = new Schema<ClientDoc>(
  {
    _id: { type: String, required: true },
    client_name: { type: String, required: true },
    client_uri: { type: String, default: null },
    redirect_uris: { type: [String], required: true },
    token_endpoint_auth_method: { type: String, required: true },
    secret_hash: { type: String, default: null },
    grant_types: { type: [String], required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);

const codeSchema = new Schema<CodeDoc>(
  {
    _id: { type: String, required: true },
    client_id: { type: String, required: true },
    redirect_uri: { type: String, required: true },
    code_challenge: { type: String, required: true },
    scope: { type: String, required: true },
    resource: { type: String, required: true },
    user: { type: String, required: true },
    workspace: { type: String, required: true },
    grant: { type: String, required: true },
    expires_at: { type: Date, required: true },
    used_at: { type: Date, default: null },
  },
  { versionKey: false },
);

const grantSchema = new Schema<GrantDoc>(
  {
    _id: { type: String, required: true },
    client_id: { type: String, required: true },
    user: { type: String, required: true },
    workspace: { type: String, required: true },
    scope: { type: String, required: true },
    resource: { type: String, required: true },
    created_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    revoked_reason: { type: String, default: null },
  },
  { versionKey: false },
);

const refreshSchema = new Schema<RefreshTokenDoc>(
  {
    _id: { type: String, required: true },
    grant: { type: String, required: true },
    client_id: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    used_at: { type: Date, default: null },
  },
  { versionKey: false },
);
refreshSchema.index({ grant: 1 });

function model<T>(db: Connection, name: string, schema: Schema<T>, collection: string): Model<T> {
  return (db.models[name] as Model<T> | undefined) ?? db.model<T>(name, schema, collection);
}

/** The OAuth collections on the gateway's database. */
export function oauthModels(db: Connection) {
  return {
    clients: model(db, 'OAuthClient', clientSchema, 'oauth_clients'),
    codes: model(db, 'OAuthCode', codeSchema, 'oauth_codes'),
    grants: model(db, 'OAuthGrant', grantSchema, 'oauth_grants'),
    refreshTokens: model(db, 'OAuthRefreshToken', refreshSchema, 'oauth_refresh_tokens'),
  };
}
