import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CuadraError } from './errors.ts';
import type { Principal } from './principal.ts';

/** `points` requests per `seconds` window. */
export interface Quota { points: number; seconds: number }

/** Parses `600/60` (requests / window seconds), as the environment gives quotas. */
export function parseQuota(text: string | undefined, fallback: Quota): Quota {
  if (!text) return fallback;
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) throw new Error(`A rate-limit quota looks like 600/60 (requests/seconds), not "${text}".`);
  const quota = { points: Number(match[1]), seconds: Number(match[2]) };
  // A window of 0 s never expires: a credential would be blocked for good.
  if (quota.points < 1 || quota.seconds < 1) throw new Error(`A rate-limit quota needs at least 1 request per at least 1 second, not "${text}".`);
  return quota;
}

/** Quotas from `RATE_LIMIT_PER_CREDENTIAL` and `RATE_LIMIT_PER_WORKSPACE`. */
export function quotasFromEnv(env: NodeJS.ProcessEnv = process.env): { credential: Quota; workspace: Quota } {
  return {
    credential: parseQuota(env.RATE_LIMIT_PER_CREDENTIAL, { points: 600, seconds: 60 }),
    workspace: parseQuota(env.RATE_LIMIT_PER_WORKSPACE, { points: 3000, seconds: 60 }),
  };
}

/**
 * The namespace of this deployment's counters in Redis (`REDIS_KEY_PREFIX`, default `cuadra`), so
 * several deployments — or several test systems — can share one Redis without sharing limits.
 */
export function redisKeyPrefix(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDIS_KEY_PREFIX ?? 'cuadra';
}

/** Headers for an answer (IETF RateLimit fields, draft-11 form). */
export type RateLimitHeaders = Record<string, string>;

/** One request's count, settled: the headers to send, or the refusal (`rate_limited`, `unavailable`) to answer. */
export type RateCount = { headers: RateLimitHeaders } | { refusal: unknown };

/** A count's headers, or its refusal thrown. */
export function countedHeaders(count: RateCount): RateLimitHeaders {
  if ('refusal' in count) throw count.refusal;
  return count.headers;
}

/**
 * The most calls one gateway counts ahead, in one round trip, for one credential (a block). Calls
 * of a block are served from this gateway's memory, without Redis, while the revocations channel
 * is live (see {@link RateLimiter.enableLeases}).
 */
export const LEASE_MAX = 16;
/**
 * A block is at most 1/LEASE_SHARE of what is left of the tighter of the two quotas: blocks shrink
 * as a window is spent, and the last LEASE_SHARE calls of a window are counted one at a time.
 */
export const LEASE_SHARE = 16;

/**
 * The two counters of a call, as a Lua fragment over KEYS[k+1], KEYS[k+2] (credential, workspace),
 * KEYS[k+3], KEYS[k+4] (the gateways that have counted in each window) and ARGV[a+1..a+11]: the
 * windows (s), the quotas, this gateway's own count of each window it still holds open and the ms
 * left of it, this gateway's id, the largest block and {@link LEASE_SHARE}. Appended to `out`:
 * {consumed₁, pttl₁, consumed₂, pttl₂, block}.
 *
 * Each counter is a fixed window as rate-limiter-flexible keeps it (create at 0 with the window's
 * expiry when absent, add, read the time left; an expiry lost is set again). Redis runs without
 * persistence, so a restart empties the counters in the middle of windows: the first time a
 * gateway counts in a window it is recorded in the window's set, and a gateway that finds itself
 * missing from the set of a window it still holds open (the set was lost with the counter) gives
 * back what it counted in that window, once — so after a restart the count resumes at the sum of
 * what the gateways had counted, neither lost nor doubled. A block of `block` calls is taken from
 * both counters at once: at most ARGV[a+10], at most 1/ARGV[a+11] of what is left of either quota,
 * at least one.
 */
const takeBlock = (k: number, a: number) => `local block = tonumber(ARGV[${a} + 10])
local ttl = {}
for i = 1, 2 do
  local key, window, mine = KEYS[${k} + i], ARGV[${a} + i], tonumber(ARGV[${a} + 4 + i])
  if redis.call('sadd', KEYS[${k} + 2 + i], ARGV[${a} + 9]) == 1 and mine > 0 then
    redis.call('set', key, 0, 'PX', ARGV[${a} + 6 + i], 'NX')
    redis.call('incrby', key, mine)
  end
  redis.call('set', key, 0, 'EX', window, 'NX')
  local t = redis.call('pttl', key)
  if t < 0 then
    redis.call('expire', key, window)
    t = 1000 * window
  end
  redis.call('pexpire', KEYS[${k} + 2 + i], t)
  ttl[i] = t
  if block > 1 then
    block = math.min(block, math.floor((tonumber(ARGV[${a} + 2 + i]) - tonumber(redis.call('get', key))) / tonumber(ARGV[${a} + 11])))
  end
end
if block < 1 then block = 1 end
for i = 1, 2 do
  out[#out + 1] = redis.call('incrby', KEYS[${k} + i], block)
  out[#out + 1] = ttl[i]
end
out[#out + 1] = block
return out`;

/** Both counters in one script, so one round trip. Answers {consumed₁, pttl₁, consumed₂, pttl₂, block}. */
const TAKE = `local out = {}\n${takeBlock(0, 0)}`;

/**
 * The same, counted only while KEYS[1] still holds ARGV[1] (the shared cache entry of the
 * credential the caller read earlier): answers {0} and counts nothing when it does not, else
 * {1, consumed₁, pttl₁, consumed₂, pttl₂, block}. Lets a caller check "still this credential, not
 * revoked" and count the call in one round trip.
 */
const TAKE_IF = `if redis.call('get', KEYS[1]) ~= ARGV[1] then return {0} end
local out = {1}
${takeBlock(1, 1)}`;

type TakeCommand = (...args: (string | number)[]) => Promise<number[]>;

/** What this gateway has counted in one counter's window, while the window lasts (ms since the epoch, conservative). */
interface Tally { counted: number; until: number }

/**
 * Calls of one credential counted in Redis ahead of time by this gateway and not yet served: what
 * both counters stood at after the block was taken, and when each window ends (conservative).
 */
interface Lease { left: number; until: number; credential: number; credentialEnds: number; workspace: number; workspaceEnds: number }

/** How many tallies a process keeps before it forgets the windows that have ended. */
const TALLIES_MAX = 20_000;

/**
 * The limiter shared by every instance: counters live in Redis, so gateways on one Redis enforce
 * one limit. A call is counted against its credential and its workspace, both in one Redis round
 * trip — or, for a credential whose caller vouches for revocation reaching it (see
 * {@link enableLeases}), from a block of calls counted ahead in Redis.
 *
 * The guarantee (ARCHITECTURE.md "Rate limits across gateways"): every call served is counted in
 * Redis before it is served, so the calls served in a window by all gateways together never exceed
 * a quota; a block held by one gateway is not available to another, so a caller spreading its
 * calls over G gateways can be refused while at most (G − 1) × (LEASE_MAX − 1) calls per credential
 * of the window are still unserved in blocks elsewhere (never near the end of a window: the last
 * LEASE_SHARE calls are counted one by one). After Redis restarts empty, each gateway gives back
 * its own count of the windows it still holds open on its next count in each (see {@link takeBlock}).
 */
export class RateLimiter {
  readonly #redis: Redis & { cuadraTake?: TakeCommand; cuadraTakeIf?: TakeCommand };
  readonly #quotas: { credential: Quota; workspace: Quota };
  /** `RateLimit-Policy`: the same on every answer, so written once. */
  readonly #policy: string;
  readonly #prefix: string;
  /** This limiter's name in the windows' sets of gateways. */
  readonly #id = randomBytes(9).toString('base64url');
  readonly #tallies = new Map<string, Tally>();
  readonly #leases = new Map<string, Lease>();
  #leasing = false;
  /** Credentials with a block being taken: concurrent calls are counted one by one meanwhile, so a burst takes one block, not one each. */
  readonly #taking = new Set<string>();
  /** Moves on every lease dropped: a block whose answer arrives after a drop it may predate is not kept. */
  #epoch = 0;

  constructor(redis: Redis, quotas: { credential: Quota; workspace: Quota }, keyPrefix = `${redisKeyPrefix()}:rl`) {
    this.#quotas = quotas;
    this.#policy = (['credential', 'workspace'] as const).map((name) => `"${name}";q=${quotas[name].points};w=${quotas[name].seconds}`).join(', ');
    this.#prefix = keyPrefix;
    this.#redis = redis;
    // EVALSHA with a fallback to EVAL when the script cache is empty (after a Redis restart).
    if (!this.#redis.cuadraTake) redis.defineCommand('cuadraTake', { numberOfKeys: 4, lua: TAKE });
    if (!this.#redis.cuadraTakeIf) redis.defineCommand('cuadraTakeIf', { numberOfKeys: 5, lua: TAKE_IF });
  }

  /**
   * Counts one call. Resolves to the headers to send; throws `rate_limited` (with the
   * headers and `retry_after` in `extra`) when either quota is spent, `unavailable` when
   * Redis cannot be reached (the limit is never silently skipped).
   */
  async consume(principal: Principal): Promise<RateLimitHeaders> {
    return (await this.#take(principal, null, 1))!;
  }

  /** {@link consume}, settled: its headers or its refusal, as a value (never rejects). */
  count(principal: Principal): Promise<RateCount> {
    return this.consume(principal).then((headers) => ({ headers }), (refusal: unknown) => ({ refusal }));
  }

  /**
   * {@link consume}, counted only if the Redis key `guard.key` still holds exactly `guard.value`
   * (checked and counted in one script: one round trip). Resolves to `null`, having counted
   * nothing, when it does not; otherwise as {@link consume}. With `ahead`, while leases are enabled,
   * it counts a block of the credential's calls (this one served, the rest by {@link leased}: only
   * for a caller that serves them so).
   */
  async consumeIfUnchanged(principal: Principal, guard: { key: string; value: string }, ahead = false): Promise<RateLimitHeaders | null> {
    const id = principal.credential_id;
    if (!ahead || !this.#leasing || this.#taking.has(id)) return this.#take(principal, guard, 1);
    this.#taking.add(id);
    try {
      return await this.#take(principal, guard, LEASE_MAX);
    } finally {
      this.#taking.delete(id);
    }
  }

  /**
   * One call of the credential served from a block this gateway counted ahead: its headers, or
   * null (no block, spent, its window over, or leases not enabled) — then count with Redis. Only for
   * a caller that has checked the credential with {@link consumeIfUnchanged} (blocks are taken there).
   */
  leased(principal: Principal): RateLimitHeaders | null {
    const lease = this.#leases.get(principal.credential_id);
    if (lease === undefined || lease.left === 0) return null;
    const now = Date.now();
    if (now >= lease.until) {
      this.#leases.delete(principal.credential_id);
      return null;
    }
    lease.left--;
    return this.#headers(lease.credential - lease.left, lease.credentialEnds - now, lease.workspace - lease.left, lease.workspaceEnds - now);
  }

  /**
   * Whether blocks may be taken and served. The caller enables them only while every revocation
   * reaches it (its revocations channel subscribed), and disables them the moment that may no
   * longer be so (the channel's connection lost): then every call is checked and counted in Redis.
   * Disabling drops every block held.
   */
  enableLeases(on: boolean): void {
    this.#leasing = on;
    if (!on) {
      this.#leases.clear();
      this.#epoch++;
    }
  }

  /** Drops the block held for a credential (it was revoked, or its role changed): its next call goes to Redis. */
  dropLease(credentialId: string): void {
    this.#leases.delete(credentialId);
    this.#epoch++;
  }

  async #take(principal: Principal, guard: { key: string; value: string } | null, maxBlock: number): Promise<RateLimitHeaders | null> {
    const { credential, workspace } = this.#quotas;
    const credentialKey = `${this.#prefix}:cred:${principal.credential_id}`;
    const workspaceKey = `${this.#prefix}:ws:${principal.workspace}`;
    const sent = Date.now();
    const mine = [this.#tallies.get(credentialKey), this.#tallies.get(workspaceKey)].map((t) => (t && t.until - sent > 1 ? t : { counted: 0, until: sent }));
    const keys = [credentialKey, workspaceKey, `${credentialKey}:gw`, `${workspaceKey}:gw`];
    const args = [
      credential.seconds, workspace.seconds, credential.points, workspace.points,
      mine[0].counted, mine[1].counted, mine[0].until - sent, mine[1].until - sent, this.#id, maxBlock, LEASE_SHARE,
    ];
    const epoch = this.#epoch;
    let raw: number[];
    try {
      raw = guard ? await this.#redis.cuadraTakeIf!(guard.key, ...keys, guard.value, ...args) : await this.#redis.cuadraTake!(...keys, ...args);
    } catch (err) {
      throw unreachable(err);
    }
    if (guard) {
      if (Number(raw[0]) !== 1) return null;
      raw = raw.slice(1);
    }
    const [credentialConsumed, credentialMs, workspaceConsumed, workspaceMs, block] = raw.map(Number);
    this.#tally(credentialKey, block, sent + credentialMs);
    this.#tally(workspaceKey, block, sent + workspaceMs);
    if (block > 1 && this.#leasing && epoch === this.#epoch) {
      // What is left of a block still held in this window is kept: counted in Redis, it is this gateway's to serve.
      const held = this.#leases.get(principal.credential_id);
      this.#leases.set(principal.credential_id, {
        left: block - 1 + (held && held.until > Date.now() ? held.left : 0), until: sent + Math.min(credentialMs, workspaceMs),
        credential: credentialConsumed, credentialEnds: sent + credentialMs, workspace: workspaceConsumed, workspaceEnds: sent + workspaceMs,
      });
    }
    // This call is the first of the block: counted as if the rest were not yet taken.
    return this.#headers(credentialConsumed - block + 1, credentialMs, workspaceConsumed - block + 1, workspaceMs);
  }

  /** Adds a block to this gateway's count of a window (a window it did not know starts at 0). */
  #tally(key: string, block: number, until: number): void {
    const now = Date.now();
    const tally = this.#tallies.get(key);
    if (tally && tally.until > now) {
      tally.counted += block;
      tally.until = until;
      return;
    }
    if (this.#tallies.size >= TALLIES_MAX) for (const [k, t] of this.#tallies) if (t.until <= now) this.#tallies.delete(k);
    this.#tallies.set(key, { counted: block, until });
  }

  /**
   * The headers of a call counted as the `credential`-th and `workspace`-th of their windows, which
   * end in the ms given; throws `rate_limited` when a quota is spent.
   */
  #headers(credential: number, credentialMs: number, workspace: number, workspaceMs: number): RateLimitHeaders {
    const credentialLeft = this.#quotas.credential.points - credential;
    const workspaceLeft = this.#quotas.workspace.points - workspace;
    // The RateLimit field reports the policy closest to being spent.
    const tightest = Math.max(workspaceLeft, 0) < Math.max(credentialLeft, 0)
      ? `"workspace";r=${Math.max(workspaceLeft, 0)};t=${Math.ceil(workspaceMs / 1000)}`
      : `"credential";r=${Math.max(credentialLeft, 0)};t=${Math.ceil(credentialMs / 1000)}`;
    const headers: RateLimitHeaders = { 'RateLimit-Policy': this.#policy, RateLimit: tightest };
    if (credentialLeft >= 0 && workspaceLeft >= 0) return headers;
    const spent = credentialLeft < 0 ? 'credential' : 'workspace';
    const retryAfter = Math.max(1, Math.ceil(Math.max(credentialLeft < 0 ? credentialMs : 0, workspaceLeft < 0 ? workspaceMs : 0) / 1000));
    throw new CuadraError('rate_limited', `Too many requests for this ${spent}; wait ${retryAfter} s and retry.`, {
      extra: { headers: { ...headers, 'Retry-After': String(retryAfter) } },
    });
  }
}

function unreachable(err: unknown): CuadraError {
  return new CuadraError('unavailable', 'The rate limiter cannot be reached; nothing was done. Try again shortly.', { cause: err });
}

/**
 * Whether Redis answers a PING within `ms`. The connection's state alone is not enough: just after
 * Redis dies the connection may not have heard of it yet and still says `ready`. For the rare
 * places that must not offer what cannot work (the sign-in forms); one round trip is cheap there.
 */
export async function redisAnswers(redis: Redis, ms = 500): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      redis.ping().then(() => true, () => false),
      new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
