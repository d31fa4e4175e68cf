// Runs schemathesis (PyPI; `pip install schemathesis`) against this system's own /openapi.json with
// every check and phase, bounded, on throwaway servers it starts and stops itself. Not part of
// `npm test`: `node scripts/fuzz.ts [--max-examples N] [--include-path-regex RE]` (extra arguments go
// to `schemathesis run`). Prints schemathesis' own summary; exits with its code.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectDatabase } from '../shared/src/index.ts';
import { Redis } from 'ioredis';
import { IdentityStore } from '../gateway/src/identity/store.ts';
import { build } from './build.ts';
import { buildMongoServerJar, startMongo, startRedis, stopAll } from './infra.ts';
import { startSmtp } from './smtp.ts';
import { startSystem } from './system.ts';

if (spawnSync('schemathesis', ['--version']).status !== 0) {
  console.error('schemathesis is not installed: pip install schemathesis');
  process.exit(2);
}
const dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-fuzz-'));
let code = 1;
let stopSmtp: (() => Promise<void>) | undefined;
try {
  await build();
  await buildMongoServerJar();
  const [mongo, redis, smtp] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(dir, 'mongo.log') }), startRedis({ dir }), startSmtp({ dir: path.join(dir, 'mail') })]);
  stopSmtp = () => smtp.stop();
  // Generous limits: the fuzzer is the only caller, and a 429 is not what it is looking for.
  const sys = await startSystem({ mongoUrl: mongo.url, redisUrl: redis.url, dbPrefix: 'fuzz', ports: 'free', logDir: path.join(dir, 'logs'), env: { LOG_LEVEL: 'warn', SMTP_URL: smtp.url, RATE_LIMIT_PER_CREDENTIAL: '100000/60', RATE_LIMIT_PER_WORKSPACE: '100000/60' } });
  const db = await connectDatabase(mongo.url, 'fuzz_gateway');
  const identity = new IdentityStore(db, new Redis(redis.url));
  await identity.init();
  const { api_key } = await identity.createWorkspace({ name: 'Fuzz SAS', ownerEmail: 'fuzz@example.com' });
  const args = ['run', `${sys.gatewayUrl}/openapi.json`, '--checks', 'all', '--phases', 'examples,coverage,fuzzing,stateful',
    '-H', `Authorization: Bearer ${api_key}`, '--max-examples', '25', '--request-timeout', '30', '--report', 'junit', '--report-dir', path.join(dir, 'report'), ...process.argv.slice(2)];
  console.log(`[fuzz] schemathesis ${args.join(' ').replace(api_key, 'nk_…')}`);
  code = await new Promise<number>((resolve) => spawn('schemathesis', args, { stdio: 'inherit' }).on('exit', (c) => resolve(c ?? 1)));
  console.log(`[fuzz] logs of the services: ${path.join(dir, 'logs')}`);
  await sys.stop();
  await db.close();
} catch (err) {
  console.error(err);
} finally {
  await stopSmtp?.().catch(() => undefined);
  await stopAll().catch(() => undefined);
}
process.exit(code);
