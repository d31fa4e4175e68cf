// `npm test`: checks the types (Node runs TypeScript by stripping types, so only tsc sees them),
// composes the supergraph (a composition error fails the tests), starts a throwaway
// MongoDB-protocol server (memory backend) and Redis, runs vitest against them, stops what it
// started, and exits with vitest's code. Extra arguments go to vitest (`--project crm`).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from './build.ts';
import { buildPeppolValidatorJar } from './peppol-validator.ts';
import { startSmtp } from './smtp.ts';
import { compileCacheDir } from './system.ts';
import { ensureJavaAndMaven, ensureRedisServer, buildMongoServerJar, repoRoot, startMongo, startRedis, stopAll } from './infra.ts';

const args = process.argv.slice(2);
// `--project subgraphs/crm` (from a workspace's own `npm test`) names the vitest project `crm`.
const projectIndex = args.indexOf('--project');
if (projectIndex >= 0 && args[projectIndex + 1]) args[projectIndex + 1] = path.basename(args[projectIndex + 1]);

const outDir = path.join(repoRoot, 'test-output');
mkdirSync(outDir, { recursive: true });
// Per run, so two runs at once (two terminals, or CI beside a developer) never remove each other's files.
const runDir = path.join(outDir, `servers-${process.pid}`);
rmSync(runDir, { recursive: true, force: true });

let code = 1;
let stopSmtp: (() => Promise<void>) | undefined;
try {
  await ensureJavaAndMaven();
  await ensureRedisServer();
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  // CUADRA_SKIP_TYPECHECK=1 is for a change in progress only (run `npm run typecheck` before committing); CI never sets it.
  if (process.env.CUADRA_SKIP_TYPECHECK === '1' && !process.env.CI) {
    console.log('[test] type check skipped (CUADRA_SKIP_TYPECHECK=1)');
  } else {
    const typecheck = await new Promise<number>((resolve) => {
      spawn(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'inherit' }).on('exit', (c) => resolve(c ?? 1));
    });
    if (typecheck !== 0) throw new Error('type check failed (tsc -p tsconfig.json)');
    console.log('[test] types check');
  }
  const { tools } = await build();
  console.log(`[test] supergraph composed; ${tools} tools in the catalog`);
  await buildMongoServerJar();
  // The Peppol BIS 3 validator the einvoicing tests run (a no-op once built; .ci/run builds it first).
  const peppolValidator = await buildPeppolValidatorJar();
  const [mongo, redis, smtp] = await Promise.all([
    startMongo({ backend: 'memory', logFile: path.join(runDir, 'mongo.log') }),
    startRedis({ dir: runDir }),
    startSmtp({ dir: path.join(runDir, 'mail') }),
  ]);
  stopSmtp = () => smtp.stop();
  console.log(`[test] MongoDB-protocol server ${mongo.url}, Redis ${redis.url}`);
  const reportFile = path.join(outDir, 'vitest-report.json');
  const vitest = path.join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
  code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, ...args], {
      cwd: repoRoot,
      stdio: 'inherit',
      env: { NODE_COMPILE_CACHE: compileCacheDir, ...process.env, MONGO_URL: mongo.url, REDIS_URL: redis.url, SMTP_URL: smtp.url, CUADRA_MAILDIR: smtp.maildir, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', CUADRA_TEST_OUTPUT: outDir, CUADRA_PEPPOL_VALIDATOR: peppolValidator },
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.once('SIGINT', forward);
    process.once('SIGTERM', forward);
    child.on('exit', (exitCode) => resolve(exitCode ?? 1));
  });
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number };
    // The plain closing line CI reads.
    console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`);
  } catch {
    // no report: vitest failed before running; its exit code says so
  }
} catch (err) {
  console.error(`[test] ${(err as Error).stack ?? err}`);
  code = 1;
} finally {
  await stopSmtp?.().catch(() => undefined);
  await stopAll().catch((err) => console.error(`[test] stopping servers: ${err}`));
  // Kept when something failed: the servers' logs are in it.
  if (code === 0) rmSync(runDir, { recursive: true, force: true });
}
process.exit(code);
