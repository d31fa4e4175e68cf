import type { Redis } from 'ioredis';

/**
 * The Redis channel every revocation is published on, so each gateway ends what the revoked
 * credential still holds open (its `/v1/events` streams) at once, not at its next check.
 */
export const REVOCATIONS_CHANNEL = 'cuadra:revocations';

/**
 * What a revocation names: an API key (`key:<id>`), an OAuth grant with every token it issued
 * (`grant:<id>`), or one access token (`jti:<jti>`).
 */
export type RevokedCredential = `key:${string}` | `grant:${string}` | `jti:${string}`;

/**
 * Publishes a revocation. Called after the revocation is stored (and cached), so a gateway that
 * acts on the message finds the credential refused too. Redis delivers a channel's messages to a
 * subscriber in the order it received them: an event published after this call reaches a stream
 * only after the stream has ended.
 */
export async function publishRevocation(redis: Redis, revoked: RevokedCredential[]): Promise<void> {
  await redis.publish(REVOCATIONS_CHANNEL, JSON.stringify({ revoked }));
}

/** The credentials a revocation message names; empty for anything that is not one. */
export function parseRevocation(message: string): string[] {
  try {
    const parsed = JSON.parse(message) as { revoked?: unknown };
    return Array.isArray(parsed.revoked) ? parsed.revoked.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    return [];
  }
}
