import { parseQuota, redisAnswers, redisKeyPrefix, type Quota } from '@cuadra/shared';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Abuse limits on the unauthenticated endpoints (sign-in, agent sign-up, client registration),
 * counted in Redis so every gateway shares them. Keys are client addresses (and e-mails for sign-in).
 */
export class Throttle {
  readonly #limiter: RateLimiterRedis;
  readonly #redis: Redis;

  constructor(redis: Redis, name: string, quota: Quota) {
    this.#redis = redis;
    this.#limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${redisKeyPrefix()}:rl:${name}`, points: quota.points, duration: quota.seconds });
  }

  /** Whether the throttle can count now (its Redis answers): a form it guards cannot work otherwise. */
  available(): Promise<boolean> {
    return redisAnswers(this.#redis);
  }

  /** Counts one attempt; resolves to null when allowed, or the seconds to wait. */
  async hit(key: string): Promise<number | null> {
    try {
      await this.#limiter.consume(key);
      return null;
    } catch (err) {
      if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw err;
    }
  }

  /** Forgets a key's attempts (a successful sign-in clears that e-mail's failures). */
  async reset(key: string): Promise<void> {
    await this.#limiter.delete(key);
  }
}

/** The quotas of these throttles, from the environment, with defaults fit for production. */
export function throttleQuotas(env: NodeJS.ProcessEnv = process.env): { login: Quota; loginAddress: Quota; signup: Quota; register: Quota; siteForm: Quota; siteFormSite: Quota; bookingForm: Quota; bookingFormWorkspace: Quota } {
  return {
    // Per address and e-mail: 10 failed tries per 15 minutes.
    login: parseQuota(env.LOGIN_RATE_LIMIT, { points: 10, seconds: 900 }),
    // Per address, whatever the e-mail: 100 tries per 15 minutes.
    loginAddress: parseQuota(env.LOGIN_ADDRESS_RATE_LIMIT, { points: 100, seconds: 900 }),
    signup: parseQuota(env.SIGNUP_RATE_LIMIT, { points: 10, seconds: 3600 }),
    register: parseQuota(env.REGISTER_RATE_LIMIT, { points: 60, seconds: 3600 }),
    // Hosted sites' form posts (no credential): per visitor address, whatever the site…
    siteForm: parseQuota(env.SITE_FORM_RATE_LIMIT, { points: 20, seconds: 600 }),
    // …and per site, whoever sends (a flood from many addresses fills no site's leads and crm beyond this).
    siteFormSite: parseQuota(env.SITE_FORM_SITE_RATE_LIMIT, { points: 300, seconds: 3600 }),
    // Public booking pages (/book/…): bookings per visitor address, and per workspace whoever books.
    bookingForm: parseQuota(env.BOOKING_FORM_RATE_LIMIT, { points: 10, seconds: 600 }),
    bookingFormWorkspace: parseQuota(env.BOOKING_FORM_WORKSPACE_RATE_LIMIT, { points: 200, seconds: 3600 }),
  };
}
