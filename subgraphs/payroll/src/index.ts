import { connectDatabase, createLogger, serviceConfig } from '@cuadra/shared';
import { createServer, name } from './server.ts';

// The only file with side effects: read the environment, connect, listen.
const config = serviceConfig(name, 4103);
const log = createLogger(name);
const db = await connectDatabase(config.mongoUrl, config.dbName);
const server = await createServer({ db, log, assertionPublicKey: config.assertionPublicKey });
const { url } = await server.listen(config.port, config.host);
log.info({ url }, `${name} subgraph listening`);

async function shutdown(signal: string) {
  log.info({ signal }, 'shutting down');
  await server.stop();
  await db.close();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
