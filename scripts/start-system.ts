// `npm start` (entered through scripts/start.ts): the whole system on its embedded default.
// Installs what is missing, composes the supergraph, starts the MongoDB-protocol server (H2 file under .data/), Redis, five subgraphs
// and the gateway on http://127.0.0.1:4000, and stops everything it started on Ctrl-C.
// A second start reuses the data (and the signing keys) under .data/.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { build } from './build.ts';
import { ensureEmbeddedModel } from './model.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from './infra.ts';
import { startImap } from './imap.ts';
import { LOCAL_MAIL_DOMAIN, startSmtp } from './smtp.ts';
import { generateLedgerKeyPair, loadOrCreateKeys, loadOrCreateSealKey, startSystem, type RunningSystem } from './system.ts';

const dataDir = path.resolve(repoRoot, process.env.CUADRA_DATA_DIR ?? '.data');
const gatewayPort = Number(process.env.PORT ?? 4000);
const runFile = path.join(dataDir, 'run.json');

function say(text: string): void {
  process.stdout.write(`[cuadra] ${text}\n`);
}

/** True when something already listens on the port (another Cuadra, say). */
function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

let system: RunningSystem | undefined;
let stopSmtp: (() => Promise<void>) | undefined;
let stopImap: (() => Promise<void>) | undefined;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (stopping) process.exit(code);
  stopping = true;
  say('stopping…');
  await system?.stop().catch(() => undefined);
  await stopSmtp?.().catch(() => undefined);
  await stopImap?.().catch(() => undefined);
  await stopAll().catch((err) => say(`while stopping servers: ${err}`));
  rmSync(runFile, { force: true });
  say('stopped');
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

try {
  const freeSubgraphPorts = process.env.CUADRA_SUBGRAPH_PORTS === 'free';
  for (const port of [gatewayPort, ...(freeSubgraphPorts ? [] : SUBGRAPHS.map((s) => s.port))]) {
    if (await portTaken(port)) throw new Error(`Port ${port} is already in use (is Cuadra already running?). Stop that first.`);
  }
  // Installs first, one after another (apt-get takes one install at a time).
  say('checking Java, Maven and Redis…');
  await ensureJavaAndMaven();
  await ensureRedisServer();
  const logDir = path.join(dataDir, 'logs');
  // Then everything that does not wait on another, side by side: the composition (this process's CPU)
  // while the database server's JVM, Redis and the mail servers start in theirs. Every start is
  // awaited before a failure is reported, so Ctrl-C or an error stops whatever did start.
  const startServers = async () => {
    mkdirSync(path.join(dataDir, 'mongo'), { recursive: true });
    await buildMongoServerJar();
    const [mongo, redis, mail] = await Promise.all([
      startMongo({ backend: 'h2', file: path.join(dataDir, 'mongo', 'cuadra.mv'), logFile: path.join(logDir, 'mongo.log') }),
      startRedis({ dir: path.join(dataDir, 'redis') }),
      (async () => {
        // A real SMTP server delivering to a local mailbox (`npm run cuadra -- mail` reads it).
        const smtp = await startSmtp({ dir: path.join(dataDir, 'mail') });
        stopSmtp = () => smtp.stop();
        // The campaigns' bounce mailbox (the marketing service reads bounces and replies there over IMAP).
        const imap = await startImap({ dir: path.join(dataDir, 'imap'), mailboxes: smtp.mailboxes, users: ['bounces'] });
        stopImap = () => imap.stop();
        return { smtp, imap };
      })(),
    ]);
    return { mongo, redis, ...mail };
  };
  const [composed, servers] = await Promise.allSettled([
    // Composed again only when the code changed since the last build (its inputs' digest).
    build({ ifChanged: true }),
    startServers(),
    // The embedded model agents run on by default; the agents service starts it on first use.
    ensureEmbeddedModel((line) => say(`embedded model: ${line}`)).catch((err) => say(`the embedded model is not installed (${(err as Error).message}); agents on it will fail until node scripts/model.ts succeeds`)),
  ]);
  if (composed.status === 'rejected') throw composed.reason;
  if (servers.status === 'rejected') throw servers.reason;
  const { mongo, redis, smtp, imap } = servers.value;
  say(`supergraph ${composed.value.reused ? 'unchanged since the last build' : 'composed'}; ${composed.value.tools} tools`);
  say(`SMTP server ${smtp.url} (mail in ${smtp.maildir}; read it with npm run cuadra -- mail)`);
  say(`IMAP server 127.0.0.1:${imap.port} (the campaigns' bounce mailbox bounces@${LOCAL_MAIL_DOMAIN})`);
  say(`MongoDB-protocol server ${mongo.url} (data in ${path.relative(repoRoot, dataDir)}/mongo), Redis ${redis.url}`);
  system = await startSystem({
    mongoUrl: mongo.url,
    redisUrl: redis.url,
    // CUADRA_SUBGRAPH_PORTS=free: subgraphs on free ports (a second system beside a running one, as tests do).
    ports: freeSubgraphPorts ? 'free' : 'default',
    gatewayPort,
    logDir,
    keys: loadOrCreateKeys(path.join(dataDir, 'keys')),
    // Kept across restarts so people's sign-ins (access tokens) survive a restart too.
    tokenKeys: loadOrCreateKeys(path.join(dataDir, 'keys'), 'token-signing-key'),
    // Kept across restarts: secrets sealed in idempotency records and approvals open only with it.
    sealKey: loadOrCreateSealKey(path.join(dataDir, 'keys')),
    // Kept across restarts: receipts and checkpoints signed before a restart must still verify.
    ledgerKeys: loadOrCreateKeys(path.join(dataDir, 'keys'), 'ledger-key', generateLedgerKeyPair),
    env: { SMTP_URL: smtp.url, MARKETING_IMAP_URL: imap.urlFor('bounces'), MARKETING_BOUNCE_ADDRESS: `bounces@${LOCAL_MAIL_DOMAIN}`, ...(process.env.PUBLIC_URL ? { PUBLIC_URL: process.env.PUBLIC_URL } : {}) },
  });
  writeFileSync(runFile, `${JSON.stringify({ gateway_url: system.gatewayUrl, mongo_url: mongo.url, redis_url: redis.url, maildir: smtp.maildir, pid: process.pid }, null, 2)}\n`);
  for (const proc of [system.gateway, ...Object.values(system.subgraphs)]) {
    proc.child.once('exit', (code, signal) => {
      if (stopping) return;
      say(`${proc.name} stopped unexpectedly (${code ?? signal}); see ${path.relative(repoRoot, logDir)}/${proc.name}.log`);
      void shutdown(1);
    });
  }
  say(`Cuadra is running at ${system.gatewayUrl}  (logs in ${path.relative(repoRoot, logDir)}/; Ctrl-C stops it)`);
  say(`create a workspace: npm run cuadra -- workspace create --name "Acme" --owner-email you@example.com`);
} catch (err) {
  say(`could not start: ${(err as Error).message}`);
  await shutdown(1);
}
