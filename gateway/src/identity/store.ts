import { randomBytes } from 'node:crypto';
import {
  API_KEY_SHAPE, backfillPositions, createPositioned, CuadraError, ensureModel, hashApiKey, listNewestFirst, newApiKey, newId, type Principal, type RateLimiter,
  type RateCount, type RateLimitHeaders, sameDigest, isAgentRunAssertion, verifyAgentRunAssertion,
} from '@cuadra/shared';
import { CURRENT_API_VERSION, pinnedOrFirst, type ApiVersion } from '../versions/dates.ts';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { identityModels, type ApiKeyDoc } from './models.ts';
import { RoleStore } from './roles.ts';
import { publishRevocation, RevocationChannel } from './revocations.ts';

/** How long a checked key stays in the Redis cache. Revocation overwrites the entry at once. */
const CACHE_SECONDS = 60;
const cacheKey = (hash: string) => `cred:${hash}`;
const REVOKED = 'revoked';
/** How many shared cache entries one process remembers (see {@link IdentityStore.authenticateApiKeyCounted}). */
const SEEN_MAX = 10_000;

/** What the shared cache holds of a key. */
type CachedKey = Pick<ApiKeyDoc, '_id' | 'workspace' | 'role' | 'patterns' | 'hash' | 'actor_type' | 'expires_at' | 'revoked_at' | 'created_by_person'>;

/** Currency of a country when the caller does not say (CONTRACT.md §4: default from country). */
const COUNTRY_CURRENCY: Record<string, string> = { CO: 'COP', MX: 'MXN', PE: 'PEN', CL: 'CLP', AR: 'ARS', EC: 'USD', US: 'USD', ES: 'EUR', DE: 'EUR', FR: 'EUR', NL: 'EUR', IT: 'EUR', PT: 'EUR', BE: 'EUR' };

/** Turns an OAuth access token into a principal (the OAuth server's `AccessTokens`). */
export interface AccessTokenAuthenticator {
  authenticate(token: string): Promise<Principal>;
}

/** JSON Schema of an API key as {@link IdentityStore.listApiKeys} shows it: never the key, never its hash. */
export const API_KEY_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'role', 'patterns', 'prefix', 'created_at', 'expires_at', 'revoked_at'],
  properties: {
    id: { type: 'string', pattern: '^key_' },
    name: { type: 'string' },
    role: { type: 'string' },
    patterns: { type: 'array', items: { type: 'string' } },
    prefix: { type: 'string', description: 'The first characters of the key (nk_…), to recognise it.' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/**
 * Workspaces and API keys: the gateway owns who the caller is (DOMAIN.md). Keys are checked
 * against MongoDB with a short Redis cache shared by every gateway instance.
 */
/** A key as the tools show it (public shape: {@link API_KEY_VIEW_SCHEMA}): never its hash. */
function apiKeyRow(k: ApiKeyDoc): { id: string; name: string; role: string; patterns: string[]; prefix: string; created_at: string; expires_at: string | null; revoked_at: string | null } {
  return {
    id: k._id, name: k.name, role: k.role, patterns: k.patterns, prefix: k.prefix, created_at: k.created_at.toISOString(),
    expires_at: k.expires_at ? k.expires_at.toISOString() : null, revoked_at: k.revoked_at ? k.revoked_at.toISOString() : null,
  };
}

/** A workspace slug: 2–40 lower-case letters, digits and hyphens. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,39}$/;

/**
 * Slugs to try for a workspace named `name`, in order: the name in lower case without accents, words
 * joined by hyphens ("Consultora Ñandú S.A.S." → `consultora-nandu-s-a-s`), then that with a random
 * suffix (a taken name does not reveal which workspace holds it).
 */
export function slugCandidates(name: string): string[] {
  let base = name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 34).replace(/-+$/, '');
  if (base.length < 2) base = 'espacio';
  return [base, ...Array.from({ length: 5 }, () => `${base}-${randomBytes(3).toString('hex')}`)];
}

export class IdentityStore {
  readonly #models: ReturnType<typeof identityModels>;
  readonly #redis: Redis;
  #accessTokens: AccessTokenAuthenticator | null = null;
  #agentRunKey: string | null = null;
  /**
   * Shared cache entries this process has checked: key hash → the entry's exact text, the key it
   * holds, and the key's principal once nothing it is made of can change while the entry stands (a
   * built-in role, the workspace's country known): a call then finds its caller without an await.
   */
  readonly #seen = new Map<string, { entry: string; key: CachedKey; principal?: Principal }>();
  /** The workspaces' custom roles; their patterns are resolved at every authentication. */
  readonly roles: RoleStore;
  /** Each workspace's country, read once: it is chosen when the workspace is opened and never changes. */
  readonly #countries = new Map<string, string>();
  /** Each workspace's pinned API version, read once per process (no tool moves a pin yet). */
  readonly #pins = new Map<string, ApiVersion>();
  /** The limiter whose blocks this gateway's revocations reach ({@link listenForRevocations}). */
  #limiter: RateLimiter | null = null;
  #channel: RevocationChannel | null = null;

  constructor(db: Connection, redis: Redis) {
    this.#models = identityModels(db);
    this.#redis = redis;
    this.roles = new RoleStore(db, redis);
  }

  /** Makes sure the unique indexes exist before the first key is written. */
  async init(): Promise<void> {
    await Promise.all([ensureModel(this.#models.workspaces), ensureModel(this.#models.apiKeys), this.roles.init()]);
    await backfillPositions(this.#models.apiKeys);
    await this.backfillSlugs();
  }

  /** Gives each workspace opened before slugs existed one derived from its name (idempotent; a second run finds none). */
  async backfillSlugs(): Promise<number> {
    let given = 0;
    for (const w of await this.#models.workspaces.find({ slug: null }, { _id: 1, name: 1 }).lean()) {
      for (const candidate of slugCandidates(w.name)) {
        try {
          if ((await this.#models.workspaces.updateOne({ _id: w._id, slug: null }, { $set: { slug: candidate } })).modifiedCount === 1) given++;
          break;
        } catch (err) {
          if ((err as { code?: number }).code !== 11000) throw err;
        }
      }
    }
    return given;
  }

  /** A workspace's public slug (null before the start-up backfill gave it one). */
  async slugOf(workspace: string): Promise<string | null> {
    return (await this.#models.workspaces.findOne({ _id: workspace }, { slug: 1 }).lean())?.slug ?? null;
  }

  /** The workspace a public slug names (and its country, as a principal states it), or null. */
  async workspaceBySlug(slug: string): Promise<{ id: string; name: string; country: string | null } | null> {
    if (!SLUG_PATTERN.test(slug)) return null;
    const w = await this.#models.workspaces.findOne({ slug }, { _id: 1, name: 1, country: 1 }).lean();
    return w ? { id: w._id, name: w.name, country: w.country ?? null } : null;
  }

  /** How many active (unrevoked) API keys of the workspace hold the role. */
  async countKeysWithRole(workspace: string, role: string): Promise<number> {
    return this.#models.apiKeys.countDocuments({ workspace, role, revoked_at: null });
  }

  /** Opens a workspace and its first (owner) API key. The key is returned once and never stored. */
  async createWorkspace(input: { name: string; ownerEmail: string; country?: string; currency?: string; openedBy?: 'operator' | 'person' | 'agent'; keyName?: string; slug?: string }): Promise<{ workspace_id: string; api_key: string; key_id: string }> {
    const name = input.name.trim();
    if (!name || name.length > 200) throw new CuadraError('invalid_input', 'A workspace needs a name of 1 to 200 characters.', { field: '/name' });
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(input.ownerEmail)) throw new CuadraError('invalid_input', 'The owner e-mail is not valid.', { field: '/owner_email' });
    const country = (input.country ?? 'CO').toUpperCase();
    if (!/^[A-Z]{2}$/.test(country)) throw new CuadraError('invalid_input', 'The country must be an ISO 3166-1 alpha-2 code.', { field: '/country' });
    const currency = (input.currency ?? COUNTRY_CURRENCY[country] ?? 'USD').toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency)) throw new CuadraError('invalid_input', 'The currency must be an ISO 4217 code.', { field: '/currency' });
    if (input.slug !== undefined && !SLUG_PATTERN.test(input.slug)) throw new CuadraError('invalid_input', 'A workspace slug is 2 to 40 lower-case letters, digits and hyphens, starting with a letter or digit.', { field: '/slug' });
    const workspaceId = newId('ws');
    // A chosen slug taken is refused; a derived one moves on to the next candidate.
    const candidates = input.slug !== undefined ? [input.slug] : slugCandidates(name);
    for (const [i, slug] of candidates.entries()) {
      try {
        await this.#models.workspaces.create({
          _id: workspaceId, name, country, currency, owner_email: input.ownerEmail.toLowerCase(), opened_by: input.openedBy ?? 'operator', created_at: new Date(),
          // Pinned to today's version: a later dated version changes nothing for it until it asks (Cuadra-Version).
          api_version: CURRENT_API_VERSION, slug,
        });
        break;
      } catch (err) {
        if ((err as { code?: number }).code !== 11000 || i === candidates.length - 1) {
          if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `The slug ${slug} is taken; choose another.`, { field: '/slug' });
          throw err;
        }
      }
    }
    const key = await this.createApiKey({ workspace: workspaceId, name: input.keyName ?? 'Owner key', role: input.openedBy === 'agent' ? 'agent' : 'owner', actorType: input.openedBy === 'agent' ? 'agent' : 'api_key' });
    return { workspace_id: workspaceId, api_key: key.api_key, key_id: key.id };
  }

  /** Creates an API key; only its hash is stored. */
  async createApiKey(input: { workspace: string; name: string; role: string; patterns?: string[]; actorType?: 'api_key' | 'agent'; expiresAt?: Date | null; createdByPerson?: string | null }): Promise<{ id: string; api_key: string }> {
    const apiKey = newApiKey();
    const id = newId('key');
    await createPositioned(this.#models.apiKeys, {
      _id: id, workspace: input.workspace, name: input.name, role: input.role, patterns: input.patterns ?? [], hash: hashApiKey(apiKey),
      prefix: apiKey.slice(0, 10), actor_type: input.actorType ?? 'api_key', created_by_person: input.createdByPerson ?? null, created_at: new Date(), expires_at: input.expiresAt ?? null, revoked_at: null,
    });
    return { id, api_key: apiKey };
  }

  /** An active key of the workspace (without its hash), or null. */
  async activeApiKey(workspace: string, id: string): Promise<Pick<ApiKeyDoc, '_id' | 'role' | 'created_by_person'> | null> {
    return this.#models.apiKeys.findOne({ _id: id, workspace, revoked_at: null }, { _id: 1, role: 1, created_by_person: 1 }).lean();
  }

  /** Revokes a key of a workspace; effective at once on every gateway (the cache entry is overwritten, the revocation published). */
  async revokeApiKey(workspace: string, id: string): Promise<boolean> {
    const key = await this.#models.apiKeys.findOneAndUpdate({ _id: id, workspace, revoked_at: null }, { $set: { revoked_at: new Date() } }, { returnDocument: 'after' }).lean();
    if (!key) return false;
    await this.#redis.set(cacheKey(key.hash), REVOKED, 'EX', CACHE_SECONDS * 2);
    // Here at once (a block taken from now on meets the revoked entry); elsewhere on the message.
    this.#limiter?.dropLease(key._id);
    // Every gateway ends the key's open event streams on this message, not at their next check.
    await publishRevocation(this.#redis, [`key:${key._id}`]);
    return true;
  }

  /**
   * Lets `limiter` count a known key's calls in blocks and serve them from memory (no Redis on the
   * call) while this gateway hears every revocation: the revocations channel subscribed, a key's
   * block dropped on the message naming it (and at once on this gateway when revoked here). The
   * moment the channel's connection is lost every block is dropped and each call is checked and
   * counted in Redis again, until the channel is subscribed anew — so a revoked key is never served
   * longer than the channel's delivery of its revocation while the channel is up, and not at all
   * once the revoked entry is in Redis while it is down.
   */
  listenForRevocations(limiter: RateLimiter): void {
    this.#limiter = limiter;
    this.#channel = new RevocationChannel(this.#redis, {
      heard: (revoked) => { for (const r of revoked) if (r.startsWith('key:')) limiter.dropLease(r.slice('key:'.length)); },
      up: () => limiter.enableLeases(true),
      down: () => limiter.enableLeases(false),
    });
  }

  /** Whether the revocations channel is live (see {@link listenForRevocations}), and its connection's name in Redis. */
  get revocations(): { live: boolean; connectionName: string | null } {
    return { live: this.#channel?.live ?? false, connectionName: this.#channel?.connectionName ?? null };
  }

  /** Stops listening for revocations. */
  close(): void {
    this.#channel?.close();
    this.#limiter?.enableLeases(false);
  }

  /**
   * Lets this store accept the agents service's run assertions (issue 37), checked with the
   * services' public key: an agent of a workspace calling for one of its runs, as role `agent`.
   */
  acceptAgentRuns(servicePublicKey: string): void {
    this.#agentRunKey = servicePublicKey;
  }

  /** Lets this store accept OAuth access tokens as well as API keys (set once by the gateway). */
  acceptAccessTokens(tokens: AccessTokenAuthenticator): void {
    this.#accessTokens = tokens;
  }

  /** Who an OAuth access token is; `unauthenticated` when this gateway takes no tokens or the token fails. */
  async authenticateAccessToken(token: string): Promise<Principal> {
    if (this.#agentRunKey && isAgentRunAssertion(token)) return this.#withCountry(verifyAgentRunAssertion(token, this.#agentRunKey));
    if (!this.#accessTokens || token.length > 4096) throw new CuadraError('unauthenticated', 'The credential is neither an API key nor a valid access token.');
    return this.#withCountry(await this.#accessTokens.authenticate(token));
  }

  /**
   * The principal with its workspace's country (shared/src/locale.ts): every subgraph reads the tax
   * regime and the calendar of the workspace's documents from it. A workspace record that cannot be
   * found leaves the principal as it is (read as Colombian downstream).
   */
  async #withCountry(principal: Principal): Promise<Principal> {
    let country = this.#countries.get(principal.workspace);
    if (country === undefined) {
      country = (await this.#models.workspaces.findById(principal.workspace, { country: 1 }).lean())?.country;
      if (!country) return principal;
      if (this.#countries.size >= SEEN_MAX) this.#countries.clear();
      this.#countries.set(principal.workspace, country);
    }
    return { ...principal, country };
  }

  /** {@link pinnedVersion} when this process has read it already (no await on the per-call path), else undefined. */
  knownPin(workspace: string): ApiVersion | undefined {
    return this.#pins.get(workspace);
  }

  /** The API version the workspace is pinned to: the one it started on (the first, for a workspace older than versions). */
  async pinnedVersion(workspace: string): Promise<ApiVersion> {
    let pin = this.#pins.get(workspace);
    if (pin === undefined) {
      pin = pinnedOrFirst((await this.#models.workspaces.findById(workspace, { api_version: 1 }).lean())?.api_version);
      if (this.#pins.size >= SEEN_MAX) this.#pins.clear();
      this.#pins.set(workspace, pin);
    }
    return pin;
  }

  /** One key of the workspace as api_keys.list shows it (never its hash), or null. */
  async apiKeyView(workspace: string, id: string) {
    const k = await this.#models.apiKeys.findOne({ _id: id, workspace }).lean();
    return k ? apiKeyRow(k) : null;
  }

  /** One page of the workspace's keys, newest first (bounded: positions, never a sort of the collection); never their hashes. */
  async listApiKeys(workspace: string, page: { limit: number; cursor?: string } = { limit: 100 }) {
    return listNewestFirst<ApiKeyDoc, ReturnType<typeof apiKeyRow>>(
      this.#models.apiKeys, { workspace, limit: page.limit, cursor: page.cursor },
      apiKeyRow,
    );
  }

  /** The workspace record, or null. */
  async workspace(id: string) {
    return this.#models.workspaces.findById(id).lean();
  }

  /**
   * Who an API key is. Throws `unauthenticated` for a malformed, unknown, expired or revoked key.
   * The lookup is by the key's hash; the stored hash is then compared in constant time.
   */
  async authenticateApiKey(apiKey: string): Promise<Principal> {
    if (!API_KEY_SHAPE.test(apiKey)) throw new CuadraError('unauthenticated', 'The API key is not valid.');
    const hash = hashApiKey(apiKey);
    const cached = await this.#redis.get(cacheKey(hash));
    if (cached === REVOKED) throw new CuadraError('unauthenticated', 'This API key has been revoked.');
    let key: CachedKey | null;
    let entry: string | null = null;
    if (cached) {
      key = parseCached(cached);
      entry = cached;
    } else {
      key = await this.#models.apiKeys.findOne({ hash }, { _id: 1, workspace: 1, role: 1, patterns: 1, hash: 1, actor_type: 1, expires_at: 1, revoked_at: 1, created_by_person: 1 }).lean();
      if (key && !key.revoked_at) {
        // NX: never overwrite a revocation written meanwhile.
        const text = JSON.stringify(key);
        if ((await this.#redis.set(cacheKey(hash), text, 'EX', CACHE_SECONDS, 'NX')) === 'OK') entry = text;
      }
    }
    const principal = await this.#principalOf(key, hash);
    if (entry) this.#remember(hash, entry, key!);
    return principal;
  }

  /**
   * Who an API key is, with the call counted by `limiter` — in one Redis round trip when this
   * process has checked the key's shared cache entry before: the limiter counts only while that
   * entry is still exactly the text held here, so a revocation (which overwrites it) or an expired
   * entry is seen on this very call, as {@link authenticateApiKey} would see it; then, and for a key
   * not seen before, `count` is null: the caller counts the call once it is authenticated. `count`
   * is the limiter's headers or its refusal (`rate_limited`, `unavailable`), for the caller to record
   * as a refusal of an authenticated call.
   */
  async authenticateApiKeyCounted(apiKey: string, limiter: RateLimiter): Promise<{ principal: Principal; count: RateCount | null }> {
    const hash = API_KEY_SHAPE.test(apiKey) ? hashApiKey(apiKey) : null;
    const seen = hash ? this.#seen.get(hash) : undefined;
    if (hash && seen) {
      const now = this.#leasedCall(hash, seen, limiter);
      if (now) return now;
      let principal: Principal;
      if (seen.principal) {
        // Checked live by #leasedCall just now.
        principal = seen.principal;
      } else {
        principal = await this.#principalOf(seen.key, hash);
      }
      let headers: RateLimitHeaders | null;
      try {
        // Blocks only for a principal kept frozen (served by `leased` above); a custom role's key is counted call by call.
        headers = await limiter.consumeIfUnchanged(principal, { key: cacheKey(hash), value: seen.entry }, seen.principal !== undefined || frozenable(principal));
      } catch (err) {
        // The limiter's refusal (`rate_limited` counts only after the entry matched; `unavailable` is the caller's to record).
        return { principal, count: { refusal: err } };
      }
      if (headers) {
        // Nothing the principal is made of changes while the entry stands, but a custom role's patterns.
        if (!seen.principal && frozenable(principal)) seen.principal = Object.freeze(principal);
        return { principal, count: { headers } };
      }
      this.#seen.delete(hash);
    }
    return { principal: await this.authenticateApiKey(apiKey), count: null };
  }

  /**
   * {@link authenticateApiKeyCounted} when it needs no await: a key whose principal this process
   * keeps (frozen), checked live (expiry; a revocation has dropped it and its block), and counted from
   * the block it holds — else null, having taken nothing (the REST fast pass then takes the general
   * path). Throws the same `unauthenticated` as the general path for a key known here and no longer live.
   */
  apiKeyCountedNow(apiKey: string, limiter: RateLimiter): { principal: Principal; count: RateCount } | null {
    const hash = API_KEY_SHAPE.test(apiKey) ? hashApiKey(apiKey) : null;
    const seen = hash ? this.#seen.get(hash) : undefined;
    return hash && seen ? this.#leasedCall(hash, seen, limiter) : null;
  }

  /** A kept principal's call counted from its block (no round trip), checked live first; null without a kept principal or a block. */
  #leasedCall(hash: string, seen: { key: CachedKey; principal?: Principal }, limiter: RateLimiter): { principal: Principal; count: RateCount } | null {
    if (!seen.principal) return null;
    this.#assertLive(seen.key, hash);
    // A block counted ahead while every revocation reaches this gateway: no round trip.
    const leased = limiter.leased(seen.principal);
    return leased ? { principal: seen.principal, count: { headers: leased } } : null;
  }

  /** Refuses (`unauthenticated`) unless `key` is a live key with this hash: known, not revoked, not expired. */
  #assertLive(key: CachedKey | null, hash: string): asserts key is CachedKey {
    if (!key || !sameDigest(key.hash, hash)) throw new CuadraError('unauthenticated', 'The API key is not valid.');
    if (key.revoked_at) throw new CuadraError('unauthenticated', 'This API key has been revoked.');
    if (key.expires_at && key.expires_at.getTime() <= Date.now()) throw new CuadraError('unauthenticated', 'This API key has expired.');
  }

  /** The principal of a key read from the cache or the store; `unauthenticated` unless it is a live key with this hash. */
  async #principalOf(key: CachedKey | null, hash: string): Promise<Principal> {
    this.#assertLive(key, hash);
    // A custom role's patterns are resolved now, not cached with the key: a role change counts on the next call.
    const rolePatterns = await this.roles.principalPatterns(key.workspace, key.role);
    return this.#withCountry({
      workspace: key.workspace,
      role: key.role,
      actor: { type: key.actor_type, id: key._id },
      credential_id: key._id,
      scopes: null,
      patterns: key.patterns.length > 0 ? key.patterns : null,
      ...(rolePatterns ? { role_patterns: rolePatterns } : {}),
      ...(key.created_by_person ? { person: key.created_by_person } : {}),
    });
  }

  #remember(hash: string, entry: string, key: CachedKey): void {
    if (this.#seen.size >= SEEN_MAX && !this.#seen.has(hash)) this.#seen.clear();
    this.#seen.set(hash, { entry, key });
  }

}

/** Whether nothing a principal is made of can change while its key's cache entry stands: a built-in role, the workspace's country known. */
function frozenable(principal: Principal): boolean {
  return principal.role_patterns === undefined && principal.country !== undefined;
}

/** A key as the shared cache holds it (JSON: its expiry back to a Date). */
function parseCached(text: string): CachedKey | null {
  const key = JSON.parse(text) as CachedKey | null;
  if (key && key.expires_at) key.expires_at = new Date(key.expires_at);
  return key;
}
