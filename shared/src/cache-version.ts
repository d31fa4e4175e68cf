import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Versions of per-process caches of access-deciding state (policies, custom roles), kept in Redis.
 * A version is a random token, never a counter: after Redis restarts empty, a counter would start
 * again at values the caches already hold and a stale cache would be trusted (a `deny` policy
 * bypassed). A missing token is replaced by a fresh random one, which no cache holds, so Redis
 * can be emptied at any moment and every cache reloads from MongoDB (the truth).
 */
export async function currentVersion(redis: Redis, key: string): Promise<string> {
  const version = await redis.get(key);
  if (version !== null) return version;
  await redis.set(key, randomBytes(12).toString('hex'), 'NX');
  return (await redis.get(key)) ?? randomBytes(12).toString('hex');
}

/** Marks the cached state behind `key` as changed, for every process. */
export async function bumpVersion(redis: Redis, key: string): Promise<void> {
  await redis.set(key, randomBytes(12).toString('hex'));
}
