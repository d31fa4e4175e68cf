import { connectionAnswers, databaseAnswers } from '@cuadra/shared';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { request } from 'undici';

/**
 * `/healthz` (CONTRACT.md §2): 200 `{status:"ok", subgraphs:{…}}` when every subgraph, the
 * database and Redis answer; 503 with the same shape otherwise.
 *
 * Readiness, truthfully (issue 33, ready14): ok only when every connection a call may use is back —
 * each subgraph's `/healthz` covers its own database, the governance database and its Redis; here,
 * the gateway's database (a write and a read), the governance database (one ping through the same
 * server selection every operation takes), Redis (a ping), and the event source's subscriber once a
 * stream was asked for (`sources`: its state, no round trip). Liveness is the process answering at
 * all; there is no separate liveness route.
 */
export async function health(deps: { urls: Record<string, string>; db: Connection; governanceDb?: Connection; redis: Redis; sources?: () => boolean }): Promise<{ status: number; body: Record<string, unknown> }> {
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
  const [own, governance] = await Promise.all([databaseAnswers(deps.db), deps.governanceDb && deps.governanceDb !== deps.db ? connectionAnswers(deps.governanceDb) : true]);
  const database = own && governance ? 'ok' : 'unavailable';
  const pinged = await Promise.race([
    deps.redis.ping().then(() => true, () => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000).unref()),
  ]);
  const redis = pinged && (deps.sources?.() ?? true) ? 'ok' : 'unavailable';
  const ok = database === 'ok' && redis === 'ok' && entries.every(([, s]) => s === 'ok');
  return { status: ok ? 200 : 503, body: { status: ok ? 'ok' : 'unavailable', subgraphs, database, redis } };
}
