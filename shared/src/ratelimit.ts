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
 * The two counters of a call, as a Lua fragment over KEYS[k+1], KEYS[k+2] and their windows
 * ARGV[a+1], ARGV[a+2], appended to `out`: for each key, a fixed window as rate-limiter-flexible
 * keeps it (same keys, same arithmetic): create at 0 with the window's expiry when absent, add the
 * points, read the time left (an expiry lost is set again).
 */
const countBoth = (k: number, a: number) => `for i = 1, 2 do
  local key, window = KEYS[${k} + i], ARGV[${a} + i]
  redis.call('set', key, 0, 'EX', window, 'NX')
  local consumed = redis.call('incrby', key, 1)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, window)
    ttl = 1000 * window
  end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
end
return out`;

/** Both counters in one script, so one round trip. Answers {consumed₁, pttl₁, consumed₂, pttl₂}. */
const CONSUME_BOTH = `local out = {}\n${countBoth(0, 0)}`;

/**
 * The same, counted only while KEYS[1] still holds ARGV[1] (the shared cache entry of the
 * credential the caller read earlier): answers {0} and counts nothing when it does not, else
 * {1, consumed₁, pttl₁, consumed₂, pttl₂}. Lets a caller check "still this credential, not revoked"
 * and count the call in one round trip.
 */
const CONSUME_BOTH_IF = `if redis.call('get', KEYS[1]) ~= ARGV[1] then return {0} end
local out = {1}
${countBoth(1, 1)}`;

interface Counted { name: 'credential' | 'workspace'; remaining: number; msBeforeNext: number; limited: boolean }

/**
 * The limiter shared by every instance: counters live in Redis, so two gateways on
 * one Redis enforce one limit. A call is counted against its credential and its workspace,
 * both in one Redis round trip.
 */
export class RateLimiter {
  readonly #redis: Redis & { cuadraConsumeBoth?: (...args: (string | number)[]) => Promise<number[]>; cuadraConsumeBothIf?: (...args: (string | number)[]) => Promise<number[]> };
  readonly #quotas: { credential: Quota; workspace: Quota };
  /** `RateLimit-Policy`: the same on every answer, so written once. */
  readonly #policy: string;
  readonly #prefix: string;

  constructor(redis: Redis, quotas: { credential: Quota; workspace: Quota }, keyPrefix = `${redisKeyPrefix()}:rl`) {
    this.#quotas = quotas;
    this.#policy = (['credential', 'workspace'] as const).map((name) => `"${name}";q=${quotas[name].points};w=${quotas[name].seconds}`).join(', ');
    this.#prefix = keyPrefix;
    this.#redis = redis;
    // EVALSHA with a fallback to EVAL when the script cache is empty (after a Redis restart).
    if (!this.#redis.cuadraConsumeBoth) redis.defineCommand('cuadraConsumeBoth', { numberOfKeys: 2, lua: CONSUME_BOTH });
    if (!this.#redis.cuadraConsumeBothIf) redis.defineCommand('cuadraConsumeBothIf', { numberOfKeys: 3, lua: CONSUME_BOTH_IF });
  }

  /**
   * Counts one call. Resolves to the headers to send; throws `rate_limited` (with the
   * headers and `retry_after` in `extra`) when either quota is spent, `unavailable` when
   * Redis cannot be reached (the limit is never silently skipped).
   */
  async consume(principal: Principal): Promise<RateLimitHeaders> {
    const { credential, workspace } = this.#quotas;
    let raw: number[];
    try {
      raw = await this.#redis.cuadraConsumeBoth!(
        `${this.#prefix}:cred:${principal.credential_id}`, `${this.#prefix}:ws:${principal.workspace}`, credential.seconds, workspace.seconds,
      );
    } catch (err) {
      throw unreachable(err);
    }
    return this.#answer(raw);
  }

  /** {@link consume}, settled: its headers or its refusal, as a value (never rejects). */
  count(principal: Principal): Promise<RateCount> {
    return this.consume(principal).then((headers) => ({ headers }), (refusal: unknown) => ({ refusal }));
  }

  /**
   * {@link consume}, counted only if the Redis key `guard.key` still holds exactly `guard.value`
   * (checked and counted in one script: one round trip). Resolves to `null`, having counted
   * nothing, when it does not; otherwise as {@link consume}.
   */
  async consumeIfUnchanged(principal: Principal, guard: { key: string; value: string }): Promise<RateLimitHeaders | null> {
    const { credential, workspace } = this.#quotas;
    let raw: number[];
    try {
      raw = await this.#redis.cuadraConsumeBothIf!(
        guard.key, `${this.#prefix}:cred:${principal.credential_id}`, `${this.#prefix}:ws:${principal.workspace}`, guard.value, credential.seconds, workspace.seconds,
      );
    } catch (err) {
      throw unreachable(err);
    }
    if (Number(raw[0]) !== 1) return null;
    return this.#answer(raw.slice(1));
  }

  /** The headers of a count ({consumed₁, pttl₁, consumed₂, pttl₂}); throws `rate_limited` when a quota is spent. */
  #answer(raw: number[]): RateLimitHeaders {
    const results: Counted[] = (['credential', 'workspace'] as const).map((name, i) => {
      const consumed = Number(raw[2 * i]);
      const points = this.#quotas[name].points;
      return { name, remaining: Math.max(points - consumed, 0), msBeforeNext: Number(raw[2 * i + 1]), limited: consumed > points };
    });
    // The RateLimit field reports the policy closest to being spent.
    const tightest = results.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const reset = Math.ceil(tightest.msBeforeNext / 1000);
    const headers: RateLimitHeaders = {
      'RateLimit-Policy': this.#policy,
      RateLimit: `"${tightest.name}";r=${tightest.remaining};t=${reset}`,
    };
    const limited = results.filter((r) => r.limited);
    if (limited.length > 0) {
      const retryAfter = Math.max(1, ...limited.map((r) => Math.ceil(r.msBeforeNext / 1000)));
      throw new CuadraError('rate_limited', `Too many requests for this ${limited[0].name}; wait ${retryAfter} s and retry.`, {
        extra: { headers: { ...headers, 'Retry-After': String(retryAfter) } },
      });
    }
    return headers;
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
