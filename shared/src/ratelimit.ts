import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
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
  // A window of 0 s never expires in rate-limiter-flexible: a credential would be blocked for good.
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
 * The limiter shared by every instance: counters live in Redis, so two gateways on
 * one Redis enforce one limit. A call is counted against its credential and its workspace.
 */
export class RateLimiter {
  readonly #credential: RateLimiterRedis;
  readonly #workspace: RateLimiterRedis;
  readonly #quotas: { credential: Quota; workspace: Quota };

  constructor(redis: Redis, quotas: { credential: Quota; workspace: Quota }, keyPrefix = `${redisKeyPrefix()}:rl`) {
    this.#quotas = quotas;
    this.#credential = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${keyPrefix}:cred`, points: quotas.credential.points, duration: quotas.credential.seconds });
    this.#workspace = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${keyPrefix}:ws`, points: quotas.workspace.points, duration: quotas.workspace.seconds });
  }

  /**
   * Counts one call. Resolves to the headers to send; throws `rate_limited` (with the
   * headers and `retry_after` in `extra`) when either quota is spent, `unavailable` when
   * Redis cannot be reached (the limit is never silently skipped).
   */
  async consume(principal: Principal): Promise<RateLimitHeaders> {
    const [cred, ws] = await Promise.allSettled([
      this.#credential.consume(principal.credential_id),
      this.#workspace.consume(principal.workspace),
    ]);
    const results: { name: 'credential' | 'workspace'; res: RateLimiterRes; limited: boolean }[] = [];
    for (const [name, settled] of [['credential', cred], ['workspace', ws]] as const) {
      if (settled.status === 'fulfilled') results.push({ name, res: settled.value, limited: false });
      else if (settled.reason instanceof RateLimiterRes) results.push({ name, res: settled.reason, limited: true });
      else throw new CuadraError('unavailable', 'The rate limiter cannot be reached; nothing was done. Try again shortly.', { cause: settled.reason });
    }
    const policy = results.map(({ name }) => `"${name}";q=${this.#quotas[name].points};w=${this.#quotas[name].seconds}`).join(', ');
    // The RateLimit field reports the policy closest to being spent.
    const tightest = results.reduce((a, b) => (remaining(b.res) < remaining(a.res) ? b : a));
    const reset = Math.ceil(tightest.res.msBeforeNext / 1000);
    const headers: RateLimitHeaders = {
      'RateLimit-Policy': policy,
      RateLimit: `"${tightest.name}";r=${remaining(tightest.res)};t=${reset}`,
    };
    const limited = results.filter((r) => r.limited);
    if (limited.length > 0) {
      const retryAfter = Math.max(1, ...limited.map((r) => Math.ceil(r.res.msBeforeNext / 1000)));
      throw new CuadraError('rate_limited', `Too many requests for this ${limited[0].name}; wait ${retryAfter} s and retry.`, {
        extra: { headers: { ...headers, 'Retry-After': String(retryAfter) } },
      });
    }
    return headers;
  }
}

function remaining(res: RateLimiterRes): number {
  return Math.max(0, res.remainingPoints);
}
