import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CuadraError } from '../src/errors.ts';
import type { Principal } from '../src/principal.ts';
import { LEASE_MAX, RateLimiter, parseQuota, quotasFromEnv, type Quota } from '../src/ratelimit.ts';

let redis: Redis;

beforeAll(async () => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run tests with `npm test` (it starts the servers).');
  redis = new Redis(url, { maxRetriesPerRequest: 1 });
  await redis.ping();
});

afterAll(async () => {
  await redis?.quit();
});

/** A key prefix no other test (or run) shares. */
const prefix = () => `rltest:${randomBytes(6).toString('hex')}`;

function principal(workspace: string, credential: string): Principal {
  return { workspace, role: 'owner', actor: { type: 'api_key', id: credential }, credential_id: credential, scopes: null, patterns: null };
}

const quotas = (credential: Quota, workspace: Quota) => ({ credential, workspace });

/** The `rate_limited` error `consume` throws (fails the test when it resolves). */
async function limited(promise: Promise<unknown>): Promise<CuadraError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CuadraError);
    return err as CuadraError;
  }
  throw new Error('consume was not limited');
}

describe('RateLimiter on Redis', () => {
  it('refuses the 4th call of a 3/60 credential quota with Retry-After and the draft-11 headers', async () => {
    const limiter = new RateLimiter(redis, quotas({ points: 3, seconds: 60 }, { points: 100, seconds: 60 }), prefix());
    const p = principal('ws_a', 'key_a');
    const first = await limiter.consume(p);
    expect(first.RateLimit).toMatch(/^"credential";r=2;t=\d+$/);
    await limiter.consume(p);
    const third = await limiter.consume(p);
    expect(third.RateLimit).toMatch(/^"credential";r=0;t=\d+$/);

    const err = await limited(limiter.consume(p));
    expect(err.code).toBe('rate_limited');
    expect(err.status).toBe(429);
    const headers = (err.extra as { headers: Record<string, string> }).headers;
    expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(Number(headers['Retry-After'])).toBeLessThanOrEqual(60);
    expect(headers['Retry-After']).toMatch(/^\d+$/);
    expect(headers['RateLimit-Policy']).toContain('"credential";q=3;w=60');
    expect(headers['RateLimit-Policy']).toBe('"credential";q=3;w=60, "workspace";q=100;w=60');
    const match = /^"credential";r=0;t=(\d+)$/.exec(headers.RateLimit);
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBeGreaterThanOrEqual(1);
    expect(Number(match![1])).toBeLessThanOrEqual(60);
    // The refusal body never carries the headers.
    expect(err.toBody()).toEqual({ error: err.message, code: 'rate_limited' });
  });

  it('counts each credential separately', async () => {
    const limiter = new RateLimiter(redis, quotas({ points: 1, seconds: 60 }, { points: 100, seconds: 60 }), prefix());
    await limiter.consume(principal('ws_a', 'key_1'));
    await expect(limiter.consume(principal('ws_a', 'key_2'))).resolves.toBeDefined();
    expect((await limited(limiter.consume(principal('ws_a', 'key_1')))).code).toBe('rate_limited');
  });

  it('two limiters on the same Redis share one counter', async () => {
    const shared = prefix();
    const q = quotas({ points: 3, seconds: 60 }, { points: 100, seconds: 60 });
    const other = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    try {
      const a = new RateLimiter(redis, q, shared);
      const b = new RateLimiter(other, q, shared); // a second gateway: its own connection
      const p = principal('ws_b', 'key_b');
      await a.consume(p);
      await b.consume(p);
      const third = await a.consume(p);
      expect(third.RateLimit).toMatch(/^"credential";r=0;/);
      expect((await limited(b.consume(p))).code).toBe('rate_limited');
      expect((await limited(a.consume(p))).code).toBe('rate_limited');
    } finally {
      await other.quit();
    }
  });

  // Issue 33, the hop: a gateway counts a credential's calls ahead in blocks and serves them from
  // memory. Every call served is counted in Redis first, so two gateways together never serve more
  // than the quota; a block one holds is not the other's, so a refusal may leave at most
  // LEASE_MAX − 1 calls unserved on the other (blocks shrink to one call near the end).
  it('two limiters counting in blocks share one limit: never more served than the quota, at most LEASE_MAX − 1 left unserved', async () => {
    const shared = prefix();
    const q = quotas({ points: 400, seconds: 60 }, { points: 100_000, seconds: 60 });
    const other = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    const guard = { key: `${shared}:guard`, value: 'still this key' };
    await redis.set(guard.key, guard.value, 'EX', 60);
    try {
      const gateways = [new RateLimiter(redis, q, shared), new RateLimiter(other, q, shared)];
      for (const g of gateways) g.enableLeases(true);
      const p = principal('ws_l', 'key_l');
      let served = 0;
      let roundTrips = 0;
      const refusedBy = new Set<number>();
      // A burst at once on one gateway takes one block, not one each (the rest are counted one by one).
      const burst = await Promise.all(Array.from({ length: 20 }, () => gateways[0].consumeIfUnchanged(p, guard, true)));
      expect(burst.every((h) => h !== null)).toBe(true);
      served += burst.length;
      roundTrips += burst.length;
      for (let i = 0; refusedBy.size < 2 && i < 2_000; i++) {
        const g = gateways[i % 2];
        if (g.leased(p)) {
          served++;
          continue;
        }
        roundTrips++;
        try {
          expect(await g.consumeIfUnchanged(p, guard, true)).not.toBeNull();
          served++;
        } catch (err) {
          expect((err as CuadraError).code).toBe('rate_limited');
          refusedBy.add(i % 2);
        }
      }
      expect(refusedBy.size).toBe(2);
      expect(served).toBeLessThanOrEqual(400);
      expect(served).toBeGreaterThanOrEqual(400 - (LEASE_MAX - 1));
      // Blocks: 16 calls while 256 or more are left, then 1/16 of what is left, then one by one — about 90 round trips with the burst, not 400.
      expect(roundTrips).toBeLessThan(served / 3);
      // Redis (read here, not through the limiter) counted every call served before it was served.
      expect(Number(await redis.get(`${shared}:cred:key_l`))).toBeGreaterThanOrEqual(served);
    } finally {
      await other.quit();
    }
  });

  it('serves no block while leases are off, and drops a credential\'s block when told', async () => {
    const limiter = new RateLimiter(redis, quotas({ points: 1000, seconds: 60 }, { points: 1000, seconds: 60 }), prefix());
    const guard = { key: `${prefix()}:guard`, value: 'v' };
    await redis.set(guard.key, guard.value, 'EX', 60);
    const p = principal('ws_o', 'key_o');
    await limiter.consumeIfUnchanged(p, guard, true);
    expect(limiter.leased(p)).toBeNull();
    limiter.enableLeases(true);
    expect((await limiter.consumeIfUnchanged(p, guard, true))!.RateLimit).toMatch(/^"credential";r=998;/);
    expect(limiter.leased(p)!.RateLimit).toMatch(/^"credential";r=997;/);
    limiter.dropLease('key_o');
    expect(limiter.leased(p)).toBeNull();
    await limiter.consumeIfUnchanged(p, guard, true);
    limiter.enableLeases(false);
    expect(limiter.leased(p)).toBeNull();
  });

  // Redis runs without persistence: a restart empties the counters mid-window. Each gateway gives
  // back what it counted in a window it still holds open, once, so the count resumes where it was.
  it('after Redis loses the counters mid-window, the count resumes at the sum of what each gateway counted — once', async () => {
    const shared = prefix();
    const q = quotas({ points: 100, seconds: 60 }, { points: 1000, seconds: 60 });
    const other = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    try {
      const [a, b] = [new RateLimiter(redis, q, shared), new RateLimiter(other, q, shared)];
      const p = principal('ws_r', 'key_r');
      for (let i = 0; i < 30; i++) await a.consume(p);
      for (let i = 0; i < 30; i++) await b.consume(p);
      const keys = [`${shared}:cred:key_r`, `${shared}:ws:ws_r`];
      expect(Number(await redis.get(keys[0]))).toBe(60);
      // What a restart does to them: every key of this deployment's limiter gone.
      const all = await redis.keys(`${shared}:*`);
      expect(all).toEqual(expect.arrayContaining(keys));
      await redis.del(...all);
      // 30 (a's, given back) + 1 = 31 → r = 69; then b's 30 + 1 → 62 → r = 38; then a again: 63, nothing given twice.
      expect((await a.consume(p)).RateLimit).toMatch(/^"credential";r=69;/);
      expect((await b.consume(p)).RateLimit).toMatch(/^"credential";r=38;/);
      expect((await a.consume(p)).RateLimit).toMatch(/^"credential";r=37;/);
      expect(await redis.mget(...keys)).toEqual(['63', '63']);
      // The window is the one the gateways knew, not a fresh minute.
      expect(await redis.pttl(keys[0])).toBeLessThanOrEqual(60_000);
    } finally {
      await other.quit();
    }
  });

  it('limiters with different key prefixes do not share counters', async () => {
    const q = quotas({ points: 1, seconds: 60 }, { points: 100, seconds: 60 });
    const p = principal('ws_c', 'key_c');
    await new RateLimiter(redis, q, prefix()).consume(p);
    await expect(new RateLimiter(redis, q, prefix()).consume(p)).resolves.toBeDefined();
  });

  it('the workspace quota limits two different credentials of one workspace', async () => {
    const limiter = new RateLimiter(redis, quotas({ points: 100, seconds: 60 }, { points: 3, seconds: 60 }), prefix());
    await limiter.consume(principal('ws_d', 'key_1'));
    await limiter.consume(principal('ws_d', 'key_2'));
    const third = await limiter.consume(principal('ws_d', 'key_1'));
    expect(third.RateLimit).toMatch(/^"workspace";r=0;t=\d+$/);
    const err = await limited(limiter.consume(principal('ws_d', 'key_2')));
    expect(err.code).toBe('rate_limited');
    const headers = (err.extra as { headers: Record<string, string> }).headers;
    expect(headers['RateLimit-Policy']).toBe('"credential";q=100;w=60, "workspace";q=3;w=60');
    expect(headers.RateLimit).toMatch(/^"workspace";r=0;t=\d+$/);
    expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(err.message).toMatch(/workspace/);
    // Another workspace is not affected.
    await expect(limiter.consume(principal('ws_e', 'key_3'))).resolves.toBeDefined();
  });

  it('answers unavailable (never skips the limit) when Redis cannot be reached', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const dead = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on('error', () => undefined);
    try {
      const limiter = new RateLimiter(dead, quotas({ points: 3, seconds: 60 }, { points: 3, seconds: 60 }), prefix());
      const err = await limited(limiter.consume(principal('ws_f', 'key_f')));
      expect(err.code).toBe('unavailable');
      expect(err.status).toBe(503);
    } finally {
      dead.disconnect();
    }
  });
});

describe('parseQuota', () => {
  const fallback = { points: 600, seconds: 60 };

  it('reads requests/seconds', () => {
    expect(parseQuota('3/60', fallback)).toEqual({ points: 3, seconds: 60 });
    expect(parseQuota(' 1200/30 ', fallback)).toEqual({ points: 1200, seconds: 30 });
  });

  it('gives the fallback when unset or empty', () => {
    expect(parseQuota(undefined, fallback)).toBe(fallback);
    expect(parseQuota('', fallback)).toBe(fallback);
  });

  it.each(['abc', '60', '3/', '/60', '3/60s', '-3/60', '3.5/60', '3 / 60', '3/60/2'])('refuses %s', (text) => {
    expect(() => parseQuota(text, fallback)).toThrow(/looks like 600\/60/);
  });

  it('quotasFromEnv reads both variables, with the documented defaults', () => {
    expect(quotasFromEnv({})).toEqual({ credential: { points: 600, seconds: 60 }, workspace: { points: 3000, seconds: 60 } });
    expect(quotasFromEnv({ RATE_LIMIT_PER_CREDENTIAL: '5/10', RATE_LIMIT_PER_WORKSPACE: '50/10' })).toEqual({
      credential: { points: 5, seconds: 10 }, workspace: { points: 50, seconds: 10 },
    });
    expect(() => quotasFromEnv({ RATE_LIMIT_PER_WORKSPACE: 'abc' })).toThrow();
  });
});

describe('parseQuota refuses a window or quota of zero', () => {
  it('refuses 10/0 and 0/60', async () => {
    const { parseQuota } = await import('../src/ratelimit.ts');
    expect(() => parseQuota('10/0', { points: 1, seconds: 1 })).toThrow();
    expect(() => parseQuota('0/60', { points: 1, seconds: 1 })).toThrow();
    expect(parseQuota('10/1', { points: 1, seconds: 1 })).toEqual({ points: 10, seconds: 1 });
  });
});
