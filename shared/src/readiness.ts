import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { answersWithin, databaseAnswers } from './db.ts';

/**
 * Readiness (`/healthz`) that tells the truth: ok only when every connection a call may use would
 * be used now — not only the service's own database. A service holds several: its own database,
 * the governance database (ledger, idempotency, policies) and Redis, each its own client that
 * finds its server again on its own schedule after an outage (the driver's heartbeat, each 1 s;
 * ioredis's reconnect backoff, up to 2 s apart). Checking only one of them answered ok while a call
 * still met another one not back yet, and was refused `503 unavailable` (issue 33, ready14).
 *
 * Cheap, as it is polled: the own database is proved by a write and a read ({@link databaseAnswers});
 * every other database by one `ping`, which goes through the same server selection as any operation
 * (refused at once while its server is known down: db.ts `failFastWhileDown`); a Redis client by its
 * state alone — ready, or refusing every command (redis-client.ts `failFastWhileRedisDown`).
 */
export async function dependenciesReady(deps: { db: Connection; connections?: readonly Connection[]; redis?: readonly (Redis | undefined)[] }): Promise<{ database: boolean; redis: boolean }> {
  const [own, ...others] = await Promise.all([databaseAnswers(deps.db), ...(deps.connections ?? []).map((c) => connectionAnswers(c))]);
  return { database: own && others.every(Boolean), redis: (deps.redis ?? []).every((r) => r === undefined || redisReady(r)) };
}

/** Whether a database connection would send an operation now: one `ping` within `timeoutMs`. */
export async function connectionAnswers(connection: Connection, timeoutMs = 2_000): Promise<boolean> {
  return answersWithin(connection, timeoutMs, (db) => db.command({ ping: 1 }).then(() => true));
}

/** Whether a Redis client sends commands now (not connecting, reconnecting or closed). */
export function redisReady(client: Redis): boolean {
  return client.status === 'ready';
}
