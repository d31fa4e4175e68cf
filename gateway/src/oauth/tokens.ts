import { createHash, createPrivateKey, createPublicKey, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import { CuadraError, type Principal, modelOn } from '@cuadra/shared';
import type { Redis } from 'ioredis';
import { Schema, type Connection, type Model } from 'mongoose';
import jwt from 'jsonwebtoken';
import type { PeopleStore } from '../identity/people.ts';
import type { RoleStore } from '../identity/roles.ts';
import { publishRevocation } from '../identity/revocations.ts';

/** Access tokens live one hour (CONTRACT.md §5). */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** RFC 9068 header type: an access token can never be taken for an ID token or a gateway assertion. */
const ACCESS_TOKEN_TYP = 'at+jwt';
const revokedGrantKey = (grant: string) => `oauth:revoked-grant:${grant}`;
const revokedTokenKey = (jti: string) => `oauth:revoked-jti:${jti}`;
/** A site visitor's ID token signed out or revoked (its `jti`), remembered until it would have expired. */
const revokedIdTokenKey = (jti: string) => `sites:revoked-id-token:${jti}`;

/** Claims of a Cuadra access token (CONTRACT.md §5), plus `gid`, the grant it came from. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  ws: string;
  scope: string;
  client_id: string;
  exp: number;
  iat: number;
  jti: string;
  gid: string;
}

/** RFC 7638 thumbprint of an EC public key: a `kid` every party computes the same way. */
function thumbprint(jwk: JsonWebKey): string {
  return createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest('base64url');
}

/**
 * Signs and checks access tokens: ES256 JWTs with `typ: at+jwt`, published at
 * `/.well-known/jwks.json`. The audience is one of this server's resources (RFC 8707).
 */
export class AccessTokens {
  readonly issuer: string;
  /** Resources a token may be minted for: the API base URL and the MCP endpoint. */
  readonly resources: readonly string[];
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #jwk: JsonWebKey & { kid: string };
  readonly #redis: Redis;
  /** Revocations, durable: Redis is only their cache and may be emptied at any moment. */
  readonly #revocations: Model<RevocationDoc> | null;
  readonly #people: PeopleStore;
  readonly #roles: Pick<RoleStore, 'principalPatterns'> | null;

  constructor(deps: { issuer: string; privateKeyPem: string; redis: Redis; people: PeopleStore; roles?: Pick<RoleStore, 'principalPatterns'>; db?: Connection }) {
    this.issuer = deps.issuer;
    this.resources = [deps.issuer, `${deps.issuer}/mcp`];
    this.#privateKey = createPrivateKey(deps.privateKeyPem);
    this.#publicKey = createPublicKey(this.#privateKey);
    const jwk = this.#publicKey.export({ format: 'jwk' });
    this.#jwk = { ...jwk, kid: thumbprint(jwk), use: 'sig', alg: 'ES256' };
    this.#redis = deps.redis;
    this.#revocations = deps.db ? revocationsOn(deps.db) : null;
    this.#people = deps.people;
    this.#roles = deps.roles ?? null;
  }

  /** The published key set (RFC 7517), for anyone who verifies our access tokens. */
  jwks(): { keys: JsonWebKey[] } {
    return { keys: [this.#jwk] };
  }

  /** Is this a resource tokens may be issued for? (Trailing slashes are ignored.) */
  resourceOf(value: string | undefined): string | null {
    if (value === undefined || value === '') return this.issuer;
    const trimmed = value.replace(/\/+$/, '');
    return this.resources.includes(trimmed) ? trimmed : null;
  }

  /** Signs a one-hour access token. */
  sign(input: { user: string; workspace: string; scope: string; clientId: string; resource: string; grant: string }): { token: string; expiresIn: number } {
    const token = jwt.sign(
      { ws: input.workspace, scope: input.scope, client_id: input.clientId, gid: input.grant },
      this.#privateKey,
      {
        algorithm: 'ES256', keyid: this.#jwk.kid, header: { alg: 'ES256', typ: ACCESS_TOKEN_TYP, kid: this.#jwk.kid },
        issuer: this.issuer, audience: input.resource, subject: input.user, expiresIn: ACCESS_TOKEN_TTL_SECONDS,
        jwtid: randomBytes(16).toString('base64url'),
      },
    );
    return { token, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  /**
   * Signs a one-hour OpenID Connect ID token for a visitor of a hosted site (`sites.login`): the
   * audience is the site's address, never one of this server's resources, and the type `JWT`, never
   * `at+jwt` — so {@link decode} refuses it and no surface takes it for a credential.
   */
  signIdToken(input: { site: string; subject: string; email: string; authTime: number }): { token: string; expiresIn: number } {
    const token = jwt.sign(
      { email: input.email, email_verified: true, scope: 'sites.login', auth_time: input.authTime, amr: ['otp'] },
      this.#privateKey,
      {
        algorithm: 'ES256', keyid: this.#jwk.kid, header: { alg: 'ES256', typ: 'JWT', kid: this.#jwk.kid },
        issuer: this.issuer, audience: this.siteAudience(input.site), subject: input.subject, expiresIn: ACCESS_TOKEN_TTL_SECONDS,
        jwtid: randomBytes(16).toString('base64url'),
      },
    );
    return { token, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  /** The audience of a hosted site's ID tokens: the site's address on this server. */
  siteAudience(slug: string): string {
    return `${this.issuer}/s/${slug}`;
  }

  /**
   * The visitor an ID token of {@link signIdToken} names at the site `slug`: signature, `typ` JWT,
   * `kid`, issuer, the site's audience, expiry, the `sites.login` scope and that it was not signed
   * out or revoked ({@link revokeIdToken}: Redis, then MongoDB, as access tokens are) checked; null
   * otherwise (another site's token, an access token, anything forged, expired or revoked).
   */
  async siteVisitorOf(token: string, slug: string): Promise<{ subject: string; email: string } | null> {
    const claims = this.#siteClaims(token, slug);
    if (!claims || (await this.#isRevoked(revokedIdTokenKey(claims.jti)))) return null;
    return { subject: claims.sub, email: claims.email };
  }

  /**
   * Revokes a visitor's ID token of the site `slug` until it would have expired (sign-out, or the
   * revocation endpoint: whoever holds the token may end it, RFC 7009 §2.1). Answers whether it was
   * one: anything else (forged, another site's, expired) is left alone.
   */
  async revokeIdToken(token: string, slug: string): Promise<boolean> {
    const claims = this.#siteClaims(token, slug);
    if (!claims) return false;
    await this.#remember(revokedIdTokenKey(claims.jti), Math.max(1, claims.exp - Math.floor(Date.now() / 1000)) + 60);
    return true;
  }

  /** The claims of a valid ID token of the site `slug` (signature, `typ`, `kid`, issuer, audience, expiry, scope); null otherwise. */
  #siteClaims(token: string, slug: string): { sub: string; email: string; jti: string; exp: number } | null {
    try {
      const { header, payload } = jwt.verify(token, this.#publicKey, { algorithms: ['ES256'], issuer: this.issuer, audience: this.siteAudience(slug), complete: true }) as unknown as {
        header: { typ?: string; kid?: string }; payload: { sub?: unknown; email?: unknown; scope?: unknown; jti?: unknown; exp?: unknown };
      };
      if (header.typ !== 'JWT' || header.kid !== this.#jwk.kid || payload.scope !== 'sites.login') return null;
      const { sub, email, jti, exp } = payload;
      return typeof sub === 'string' && typeof email === 'string' && typeof jti === 'string' && typeof exp === 'number' ? { sub, email, jti, exp } : null;
    } catch {
      return null;
    }
  }

  /** Whether a revocation of any of `keys` is remembered: Redis first, then MongoDB (Redis may have been emptied by a restart; MongoDB remembers every revocation until the token would have expired). */
  async #isRevoked(...keys: string[]): Promise<boolean> {
    if ((await this.#redis.exists(...keys)) > 0) return true;
    return this.#revocations !== null && (await this.#revocations.exists({ _id: { $in: keys } })) !== null;
  }

  /** Checks signature, `typ`, `kid`, issuer, audience and expiry; null when any fails. */
  decode(token: string): AccessTokenClaims | null {
    try {
      const { header, payload } = jwt.verify(token, this.#publicKey, {
        algorithms: ['ES256'], issuer: this.issuer, audience: [this.resources[0], ...this.resources.slice(1)], complete: true,
      }) as unknown as { header: { typ?: string; kid?: string }; payload: AccessTokenClaims };
      if (header.typ !== ACCESS_TOKEN_TYP || header.kid !== this.#jwk.kid) return null;
      if (typeof payload.ws !== 'string' || typeof payload.sub !== 'string' || typeof payload.gid !== 'string' || typeof payload.scope !== 'string') return null;
      return payload;
    } catch {
      return null;
    }
  }

  /**
   * Who an access token is: the granting person's role in the token's workspace, the app as
   * actor, the token's scopes. Refused when invalid, expired, revoked, or the person left.
   */
  async authenticate(token: string): Promise<Principal> {
    const claims = this.decode(token);
    if (!claims) throw new CuadraError('unauthenticated', 'The access token is not valid for this server, or it has expired.');
    if (await this.#isRevoked(revokedGrantKey(claims.gid), revokedTokenKey(claims.jti))) throw new CuadraError('unauthenticated', 'This access token has been revoked.');
    const role = await this.#people.roleIn(claims.ws, claims.sub);
    if (!role) throw new CuadraError('unauthenticated', 'The person who granted this token is no longer a member of the workspace.');
    // The member's role as it is now (custom roles with their current patterns).
    const rolePatterns = this.#roles ? await this.#roles.principalPatterns(claims.ws, role) : null;
    return {
      workspace: claims.ws,
      role,
      actor: { type: 'oauth_app', id: claims.client_id },
      credential_id: claims.gid,
      // The person behind the app: "nobody decides their own request" compares this, whatever app carries it.
      person: claims.sub,
      scopes: claims.scope.split(' ').filter(Boolean),
      patterns: null,
      ...(rolePatterns ? { role_patterns: rolePatterns } : {}),
    };
  }

  /** Makes every access token of a grant fail at once on every gateway (they live at most an hour). */
  async revokeGrantTokens(grant: string): Promise<void> {
    await this.#remember(revokedGrantKey(grant), ACCESS_TOKEN_TTL_SECONDS + 60);
    await publishRevocation(this.#redis, [`grant:${grant}`]);
  }

  /** Revokes one access token until it would have expired anyway. */
  async revokeToken(claims: AccessTokenClaims): Promise<void> {
    const ttl = Math.max(1, claims.exp - Math.floor(Date.now() / 1000)) + 60;
    await this.#remember(revokedTokenKey(claims.jti), ttl);
    await publishRevocation(this.#redis, [`jti:${claims.jti}`]);
  }

  /** Writes a revocation to MongoDB (durable) and to Redis (the fast path every gateway reads). */
  async #remember(key: string, ttlSeconds: number): Promise<void> {
    const expires_at = new Date(Date.now() + ttlSeconds * 1000);
    if (this.#revocations) await this.#revocations.updateOne({ _id: key }, { $set: { expires_at } }, { upsert: true });
    await this.#redis.set(key, '1', 'EX', ttlSeconds);
  }
}

/** A remembered revocation of an access token (`jti`) or of every token of a grant, until those tokens expire. */
interface RevocationDoc {
  _id: string;
  expires_at: Date;
}

const revocationSchema = new Schema<RevocationDoc>({ _id: String, expires_at: Date }, { versionKey: false });

function revocationsOn(db: Connection): Model<RevocationDoc> {
  return modelOn<RevocationDoc>(db, 'OAuthRevocation', revocationSchema, 'oauth_revocations');
}
