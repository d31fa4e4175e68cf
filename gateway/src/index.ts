import { connectDatabase, createLogger, failFastWhileRedisDown, Governance, idleTrimSettings, installIdleTrim, installProbe, quotasFromEnv } from '@cuadra/shared';
import { Redis } from 'ioredis';
import { createGateway } from './server.ts';
import { SUBGRAPHS, subgraphReplicaUrls, subgraphUrl } from './subgraphs.ts';

// The only file with side effects: read the environment, connect, listen.
const env = process.env;
const log = createLogger('gateway');
const mongoUrl = env.MONGO_URL;
const signingKey = env.CUADRA_SIGNING_KEY?.replace(/\\n/g, '\n');
if (!mongoUrl || !signingKey) {
  log.fatal('MONGO_URL and CUADRA_SIGNING_KEY must be set');
  process.exit(1);
}
try {
  idleTrimSettings(env);
} catch (err) {
  log.fatal((err as Error).message);
  process.exit(1);
}
const port = env.PORT ? Number(env.PORT) : 4000;
const host = env.HOST ?? '127.0.0.1';
const db = await connectDatabase(mongoUrl, env.MONGO_DB ?? 'cuadra_gateway');
const redis = failFastWhileRedisDown(new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2, enableOfflineQueue: true }));
// Without a listener ioredis prints each failed reconnect to stderr as "Unhandled error event" (outside the log).
redis.on('error', (err) => log.warn({ err: err.message }, 'redis'));
const governanceDb = await connectDatabase(mongoUrl, env.GOVERNANCE_DB ?? 'cuadra_governance');
const governance = new Governance(governanceDb, redis);
await governance.init();
const gateway = await createGateway({
  db,
  redis,
  log,
  publicUrl: (env.PUBLIC_URL ?? `http://${host}:${port}`).replace(/\/+$/, ''),
  signingKey,
  tokenSigningKey: env.CUADRA_TOKEN_SIGNING_KEY?.replace(/\\n/g, '\n'),
  subgraphUrls: Object.fromEntries(SUBGRAPHS.map((s) => [s.name, subgraphUrl(s.name, env)])),
  subgraphReplicas: Object.fromEntries(SUBGRAPHS.map((s) => [s.name, subgraphReplicaUrls(s.name, env)])),
  quotas: quotasFromEnv(env),
  governance,
  servicePublicKey: env.CUADRA_SERVICE_PUBLIC_KEY?.replace(/\\n/g, '\n'),
  restFastPass: env.CUADRA_REST_FAST_PASS !== '0',
});
installProbe('gateway', { connections: [db, governanceDb], redis: [redis] });
// The heap pages a burst of reads left resident, given back once the gateway is idle, or busy and grown further (shared/src/memory-trim.ts).
installIdleTrim({ onTrim: (t) => log.info({ rss_mb: Math.round(t.before / 1048576), after_mb: Math.round(t.after / 1048576), ms: Math.round(t.ms), busy: t.busy }, 'heap pages given back') });
const { url } = await gateway.listen(port, host);
log.info({ url }, 'gateway listening');

async function shutdown(signal: string) {
  log.info({ signal }, 'shutting down');
  await gateway.stop();
  redis.disconnect();
  await Promise.all([db.close(), governanceDb.close()]);
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
