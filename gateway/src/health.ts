import { databaseAnswers } from '@cuadra/shared';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { request } from 'undici';

/**
 * `/healthz` (CONTRACT.md §2): 200 `{status:"ok", subgraphs:{…}}` when every subgraph, the
 * database and Redis answer; 503 with the same shape otherwise.
 */
export async function health(deps: { urls: Record<string, string>; db: Connection; redis: Redis }): Promise<{ status: number; body: Record<string, unknown> }> {
  const entries = await Promise.all(
    Object.entries(deps.urls).map(async ([name, url]) => {
      try {
        const res = await request(`${url}/healthz`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
        await res.body.dump();
        return [name, res.statusCode === 200 ? 'ok' : 'unavailable'] as const;
      } catch {
        return [name, 'unavailable'] as const;
      }
    }),
  );
  const subgraphs = Object.fromEntries(entries);
  const database = (await databaseAnswers(deps.db)) ? 'ok' : 'unavailable';
  const redis = await Promise.race([
    deps.redis.ping().then(() => 'ok', () => 'unavailable'),
    new Promise<string>((resolve) => setTimeout(() => resolve('unavailable'), 2_000).unref()),
  ]);
  const ok = database === 'ok' && redis === 'ok' && entries.every(([, s]) => s === 'ok');
  return { status: ok ? 200 : 503, body: { status: ok ? 'ok' : 'unavailable', subgraphs, database, redis } };
}
