import { peersFromEnv } from './peers.ts';
import { Redis } from 'ioredis';
import { serviceConfig } from './config.ts';
import { connectDatabase } from './db.ts';
import { Governance } from './governance/index.ts';
import { createLogger } from './logger.ts';
import { installProbe } from './probe.ts';
import { idleTrimSettings, installIdleTrim } from './memory-trim.ts';
import { failFastWhileRedisDown } from './redis-client.ts';
import type { SubgraphDeps, SubgraphServer } from './subgraph.ts';

/**
 * The process entry of a subgraph (its `src/index.ts` calls this and nothing else): read the
 * environment, connect its database, the governance database and Redis, listen, and shut
 * down cleanly on SIGTERM/SIGINT.
 */
export async function runSubgraph(name: string, defaultPort: number, createServer: (deps: SubgraphDeps) => Promise<SubgraphServer>): Promise<void> {
  const config = serviceConfig(name, defaultPort);
  const log = createLogger(name);
  try {
    idleTrimSettings();
  } catch (err) {
    log.fatal((err as Error).message);
    process.exit(1);
  }
  const db = await connectDatabase(config.mongoUrl, config.dbName);
  const governanceDb = await connectDatabase(config.mongoUrl, config.governanceDb);
  const redis = failFastWhileRedisDown(new Redis(config.redisUrl, { maxRetriesPerRequest: 2 }));
  redis.on('error', (err) => log.warn({ err: err.message }, 'redis'));
  const governance = new Governance(governanceDb, redis);
  await governance.init();
  const server = await createServer({ db, log, assertionPublicKey: config.assertionPublicKey, governance, peers: peersFromEnv() });
  installProbe(name, { connections: [db, governanceDb], redis: [redis] });
  // The heap pages a burst of reads left resident, given back once the service is idle, or busy and grown further (memory-trim.ts).
  installIdleTrim({ onTrim: (t) => log.info({ rss_mb: Math.round(t.before / 1048576), after_mb: Math.round(t.after / 1048576), ms: Math.round(t.ms), busy: t.busy }, 'heap pages given back') });
  const { url } = await server.listen(config.port, config.host);
  log.info({ url }, `${name} subgraph listening`);

  const shutdown = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    await server.stop();
    redis.disconnect();
    await Promise.all([db.close(), governanceDb.close()]);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
