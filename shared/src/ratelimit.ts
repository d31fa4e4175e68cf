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

/**
 * Both counters of a call in one script, so one round trip: for each key, a fixed window as
 * rate-limiter-flexible keeps it (same keys, same arithmetic): create at 0 with the window's
 * expiry when absent, add the points, read the time left (an expiry lost is set again).
 * Answers {consumed₁, pttl₁, consumed₂, pttl₂}.
 */
const CONSUME_BOTH = `local out = {}
for i = 1, 2 do
  redis.call('set', KEYS[i], 0, 'EX', ARGV[i], 'NX')
  local consumed = redis.call('incrby', KEYS[i], 1)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], ARGV[i])
    ttl = 1000 * ARGV[i]
  end
  out[2 * i - 1] = consumed
  out[2 * i] = ttl
end
return out`;

interface Counted { name: 'credential' | 'workspace'; remaining: number; msBeforeNext: number; limited: boolean }

/**
 * The limiter shared by every instance: counters live in Redis, so two gateways on
 * one Redis enforce one limit. A call is counted against its credential and its workspace,
 * both in one Redis round trip.
 */
export class RateLimiter {
  readonly #redis: Redis & { cuadraConsumeBoth?: (...args: (string | number)[]) => Promise<number[]> };
  readonly #quotas: { credential: Quota; workspace: Quota };
  readonly #prefix: string;

  constructor(redis: Redis, quotas: { credential: Quota; workspace: Quota }, keyPrefix = `${redisKeyPrefix()}:rl`) {
    this.#quotas = quotas;
    this.#prefix = keyPrefix;
    this.#redis = redis;
    // EVALSHA with a fallback to EVAL when the script cache is empty (after a Redis restart).
    if (!this.#redis.cuadraConsumeBoth) redis.defineCommand('cuadraConsumeBoth', { numberOfKeys: 2, lua: CONSUME_BOTH });
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
      throw new CuadraError('unavailable', 'The rate limiter cannot be reached; nothing was done. Try again shortly.', { cause: err });
    }
    const results: Counted[] = (['credential', 'workspace'] as const).map((name, i) => {
      const consumed = Number(raw[2 * i]);
      const points = this.#quotas[name].points;
      return { name, remaining: Math.max(points - consumed, 0), msBeforeNext: Number(raw[2 * i + 1]), limited: consumed > points };
    });
    const policy = results.map(({ name }) => `"${name}";q=${this.#quotas[name].points};w=${this.#quotas[name].seconds}`).join(', ');
    // The RateLimit field reports the policy closest to being spent.
    const tightest = results.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const reset = Math.ceil(tightest.msBeforeNext / 1000);
    const headers: RateLimitHeaders = {
      'RateLimit-Policy': policy,
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
