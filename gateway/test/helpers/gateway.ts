import type { FairShare, Governance } from '@cuadra/shared';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import type { Catalog } from '../../src/catalog.ts';
import type { Gateway } from '../../src/server.ts';

/** A gateway running in this process, and how to stop it. */
export interface InProcessGateway {
  gateway: Gateway;
  url: string;
  /** The gateway's own database (people, workspaces, sessions' owners). */
  db: Connection;
  /** The governance stores it writes (ledger, approvals). */
  governance: Governance;
  close(): Promise<void>;
}

/**
 * A gateway in this process on the test run's MongoDB-protocol server and Redis (databases of its
 * own, named after `label`), with no subgraph behind it: the routes, pages and tools the gateway
 * answers itself. `redis` sees the gateway's Redis client before the gateway uses it (to observe it);
 * `env` gives the quotas as the environment would; `fairShare`, the workspaces' share the test holds.
 */
export async function startInProcessGateway(label: string, opts: { env?: Record<string, string>; redis?: (redis: Redis) => void; catalog?: Catalog; fairShare?: FairShare } = {}): Promise<InProcessGateway> {
  const { connectDatabase, createLogger, generateSigningKeyPair, Governance, quotasFromEnv } = await import('@cuadra/shared');
  const { Redis } = await import('ioredis');
  const { createGateway } = await import('../../src/server.ts');
  const { SUBGRAPHS } = await import('../../src/subgraphs.ts');
  const suffix = Math.random().toString(36).slice(2, 10);
  const db = await connectDatabase(process.env.MONGO_URL!, `test_gateway_${label}_${suffix}`);
  const governanceDb = await connectDatabase(process.env.MONGO_URL!, `test_gateway_${label}_${suffix}_governance`);
  const redis = new Redis(process.env.REDIS_URL!);
  opts.redis?.(redis);
  const governance = new Governance(governanceDb, redis);
  await governance.init();
  const gateway = await createGateway({
    db, redis, log: createLogger('gateway', 'silent'), publicUrl: 'http://127.0.0.1', signingKey: generateSigningKeyPair().privateKey,
    // Nothing listens there.
    subgraphUrls: Object.fromEntries(SUBGRAPHS.map((s) => [s.name, 'http://127.0.0.1:9'])),
    quotas: quotasFromEnv(opts.env ?? {}), governance, catalog: opts.catalog, fairShare: opts.fairShare,
  });
  const url = (await gateway.listen(0)).url;
  return {
    gateway,
    url,
    db,
    governance,
    async close() {
      await gateway.stop();
      redis.disconnect();
      await Promise.all([db.close(), governanceDb.close()]);
    },
  };
}
