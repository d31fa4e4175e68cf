// `npm run test:replicas` (issue 33, "Out of one machine"): starts a throwaway MongoDB-protocol
// server and Redis, then runs test/replicas/ — two replicas of every subgraph and two gateways —
// with its own vitest config, and stops what it started. Extra arguments go to vitest.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from '../../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../../scripts/infra.ts';

const runDir = path.join(repoRoot, 'test-output', `replicas-${process.pid}`);
rmSync(runDir, { recursive: true, force: true });
mkdirSync(runDir, { recursive: true });
await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
const [mongo, redis] = await Promise.all([
  startMongo({ backend: 'memory', logFile: path.join(runDir, 'mongo.log') }),
  startRedis({ dir: runDir }),
]);
let code = 1;
try {
  const vitest = path.join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const child = spawn(process.execPath, [vitest, 'run', '--config', path.join(repoRoot, 'test', 'replicas', 'vitest.config.ts'), ...process.argv.slice(2)], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, MONGO_URL: mongo.url, REDIS_URL: redis.url, CUADRA_TEST_OUTPUT: runDir },
  });
  code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
} finally {
  await stopAll();
}
process.exit(code);
