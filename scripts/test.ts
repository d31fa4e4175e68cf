// `npm test`: checks the types (Node runs TypeScript by stripping types, so only tsc sees them),
// composes the supergraph when its inputs changed (a composition error fails the tests), starts a throwaway
// MongoDB-protocol server (memory backend), Redis and an SMTP server, and the pool of parts the
// test files share (scripts/test-pool.ts: one system per vitest worker, the Peppol validator,
// Chromium), runs vitest against them, stops what it started, prints where the time went, and
// exits with vitest's code (or 1 when the type check failed). Extra arguments go to vitest: a
// file or folder (`npm test -- test/system.test.ts`) runs just that part, `--project crm` one package.
//
// The type check (tsgo, checked against tsc by test/typecheck.test.ts) runs beside everything else;
// its errors are printed after the tests.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromiumPath } from '../shared/src/pdf.ts';
import { build } from './build.ts';
import { buildPeppolValidatorJar } from './peppol-validator.ts';
import { startImap } from './imap.ts';
import { ensureEmbeddedModel } from './model.ts';
import { ensureRadicale } from './radicale.ts';
import { LOCAL_MAIL_DOMAIN, startSmtp } from './smtp.ts';
import { compileCacheDir } from './system.ts';
import type { FileDuration } from './test-reporter.ts';
import { startTestPool, type PoolTiming, type TestPool } from './test-pool.ts';
import { RUN_MARKS, RUN_PIDS, startReaper } from './test-reaper.ts';
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
const durationsFile = path.join(runDir, 'durations.json');

// Before anything starts: the run's mark in the environment every process it starts inherits, its
// list of processes that lose their environment, and the reaper that kills them all if this process
// is killed (scripts/test-reaper.ts). A run inside a run (test/killed-run.test.ts) adds its own.
const runMark = `cuadra-run-${process.pid}-${randomBytes(8).toString('hex')}`;
const runPids = path.join(outDir, `processes-${process.pid}`);
rmSync(runPids, { force: true });
process.env[RUN_MARKS] = [process.env[RUN_MARKS], runMark].filter(Boolean).join(':');
process.env[RUN_PIDS] = [process.env[RUN_PIDS], runPids].filter(Boolean).join(':');
startReaper({ mark: runMark, pidsFile: runPids, logFile: path.join(outDir, `reaped-${process.pid}.log`) });

/** One step of the run and how long it took (ms); steps may overlap. */
const phases: { name: string; ms: number; note?: string }[] = [];
async function phase<T>(name: string, work: () => Promise<T>, note?: (result: T) => string): Promise<T> {
  const started = performance.now();
  const result = await work();
  phases.push({ name, ms: performance.now() - started, note: note?.(result) });
  return result;
}

/**
 * Checks the types of the whole tree with tsgo (`@typescript/native-preview`, TypeScript's own checker
 * ported to Go) on tsconfig.json, output kept for the end. On a fresh clone it takes ~13 CPU-seconds
 * where tsc took ~40 (75–88 s of wall time beside the tests), and the run is CPU-bound on two cores.
 * test/typecheck.test.ts holds it to tsc: the same errors, at the same lines with the same codes, on a
 * deliberately broken program; `npm run typecheck` is still tsc. One thread (`--singleThreaded`): its
 * parallel checkers spend ~60 % more CPU for a second or two of its own wall time, which the tests
 * beside it would pay. Incremental, its build info apart from tsc's (the formats differ).
 */
function typecheck(): Promise<{ code: number; output: string }> {
  const tsgo = path.join(repoRoot, 'node_modules', '@typescript', 'native-preview', 'bin', 'tsgo');
  return new Promise((resolve) => {
    const args = [tsgo, '-p', 'tsconfig.json', '--singleThreaded', '--tsBuildInfoFile', path.join('.cache', 'tsgo', 'tsconfig.tsbuildinfo')];
    const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', (error) => resolve({ code: 1, output: String(error) }));
    child.on('close', (code) => resolve({ code: code ?? 1, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Where the time went: each step, what the pool started, and the slowest files. */
function printDurations(poolTimings: PoolTiming[]): void {
  const lines = ['', '[test] where the time went'];
  for (const p of phases) lines.push(`  ${p.name.padEnd(40)} ${seconds(p.ms).padStart(9)}${p.note ? `  ${p.note}` : ''}`);
  for (const stopped of poolTimings.filter((t) => t.kind === 'systems stopped')) lines.push(`  ${'systems stopped'.padEnd(40)} ${seconds(stopped.ms).padStart(9)}  into the run: ${stopped.label}`);
  for (const thawed of poolTimings.filter((t) => t.kind === 'systems thawed')) lines.push(`  ${'idle systems frozen, thawed'.padEnd(40)} ${seconds(thawed.ms).padStart(9)}  into the run: ${thawed.label}`);
  // What hand-overs cost: each thaw until /healthz answered, and systems replaced (a whole start follows each).
  const thaws = poolTimings.filter((t) => t.kind === 'thaw').map((t) => t.ms);
  if (thaws.length > 0) lines.push(`  ${`thaws until healthy (${thaws.length})`.padEnd(40)} ${seconds(thaws.reduce((a, b) => a + b, 0)).padStart(9)}  longest ${seconds(Math.max(...thaws))}`);
  const replaced = poolTimings.filter((t) => t.kind === 'system replaced');
  if (replaced.length > 0) lines.push(`  ${`systems replaced at a hand-over (${replaced.length})`.padEnd(40)} ${seconds(replaced.reduce((a, t) => a + t.ms, 0)).padStart(9)}  ${replaced.map((t) => `${t.label} after ${seconds(t.ms)}`).join(', ')}`);
  for (const kind of ['shared system', 'own system', 'own system, lent again', 'Peppol validator', 'Chromium'] as const) {
    const of = poolTimings.filter((t) => t.kind === kind);
    if (of.length === 0) continue;
    const total = of.reduce((sum, t) => sum + t.ms, 0);
    const name = kind === 'own system' ? `own systems (${of.length} files)` : kind === 'shared system' ? `shared systems (${of.length})` : kind === 'own system, lent again' ? `own systems lent again (${of.length} files)` : kind;
    lines.push(`  ${name.padEnd(40)} ${seconds(total).padStart(9)}  ${of.map((t) => `${t.label} ${seconds(t.ms)}`).join(', ')}`);
  }
  try {
    const files = (JSON.parse(readFileSync(durationsFile, 'utf8')) as FileDuration[]).sort((a, b) => b.total - a.total);
    // Worker time by kind of file: what one more system test file, or one more module test file, costs on average.
    for (const [kind, of] of [['system test files (test/)', files.filter((f) => f.project === 'system')], ['module test files (packages)', files.filter((f) => f.project !== 'system')]] as const) {
      const total = of.reduce((sum, f) => sum + f.total, 0);
      if (of.length > 0) lines.push(`  ${`${kind}, ${of.length}`.padEnd(40)} ${seconds(total).padStart(9)}  of worker time, ${seconds(total / of.length)} a file on average`);
    }
    lines.push(`  slowest files of ${files.length} (import, hooks and tests; in its worker):`);
    for (const f of files.slice(0, 10)) {
      lines.push(`  ${seconds(f.total).padStart(9)}  ${f.file}  (import ${seconds(f.import)}, hooks and tests ${seconds(f.run)}, ${f.tests} tests)`);
    }
  } catch {
    // vitest wrote no durations (it failed before running anything)
  }
  console.log(lines.join('\n'));
}

/**
 * Keeps each file's duration in test/durations.json (`CUADRA_RECORD_DURATIONS=1 npm test`, a whole run
 * that passed), from which vitest.config.ts orders a fresh clone's run longest first.
 */
function recordDurations(): void {
  if (code !== 0 || args.length > 0) {
    console.log('[test] durations not recorded: only a whole run that passed is (no arguments)');
    return;
  }
  const files = JSON.parse(readFileSync(durationsFile, 'utf8')) as FileDuration[];
  const seconds = Object.fromEntries(files.map((f) => [f.file, Math.round(f.total / 100) / 10]).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(path.join(repoRoot, 'test', 'durations.json'), `${JSON.stringify(seconds, null, 1)}\n`);
  console.log(`[test] durations of ${files.length} files recorded in test/durations.json`);
}

let code = 1;
let stopSmtp: (() => Promise<void>) | undefined;
let pool: TestPool | undefined;
const runStarted = performance.now();
// CUADRA_SKIP_TYPECHECK=1 is for a change in progress only (run `npm run typecheck` before committing); CI never sets it.
const skipTypecheck = process.env.CUADRA_SKIP_TYPECHECK === '1' && !process.env.CI;
const typechecked = skipTypecheck ? undefined : phase('type check (beside the rest)', typecheck);
let stopImap: (() => Promise<void>) | undefined;
try {
  if (skipTypecheck) console.log('[test] type check skipped (CUADRA_SKIP_TYPECHECK=1)');
  await ensureJavaAndMaven();
  await ensureRedisServer();
  const [{ tools }, peppolValidator] = await Promise.all([
    // Composed only when an input changed (the digest beside the outputs, as `npm start` does): outputs whose
    // digest matches were made by a composition of these very inputs that passed (no digest is written
    // otherwise), and the composition (~4 CPU-s) is on the path to vitest's start — 24–56 s of it at load ~21.
    phase('build (composition)', () => build({ ifChanged: true }), (r) => `${r.tools} tools${r.reused ? ' (inputs unchanged: composed before)' : ''}`),
    phase('jars (MongoDB server, Peppol validator) and the embedded model', async () => {
      await buildMongoServerJar();
      // The embedded model the agents' end-to-end test runs (a no-op once cached; .ci/run fetches it first).
      await ensureEmbeddedModel((line) => console.log(`[test] model: ${line}`));
      // The CalDAV server the calendar tests run (a no-op once installed; .ci/run installs it first).
      await ensureRadicale((line) => console.log(`[test] radicale: ${line}`));
      // The Peppol BIS 3 validator the einvoicing tests run (a no-op once built; .ci/run builds it first).
      return buildPeppolValidatorJar();
    }),
  ]);
  console.log(`[test] supergraph composed; ${tools} tools in the catalog`);
  const [mongo, redis, smtp] = await phase('servers (MongoDB-protocol, Redis, SMTP)', () => Promise.all([
    startMongo({ backend: 'memory', logFile: path.join(runDir, 'mongo.log') }),
    startRedis({ dir: runDir }),
    startSmtp({ dir: path.join(runDir, 'mail') }),
  ]));
  stopSmtp = () => smtp.stop();
  // The system's bounce mailbox for e-mail campaigns: dovecot serving the Maildir exim delivers bounces@ to.
  const imap = await startImap({ dir: path.join(runDir, 'imap'), mailboxes: smtp.mailboxes, users: ['bounces'] });
  stopImap = () => imap.stop();
  console.log(`[test] MongoDB-protocol server ${mongo.url}, Redis ${redis.url}`);
  const testEnv: Record<string, string> = {
    MONGO_URL: mongo.url, REDIS_URL: redis.url, SMTP_URL: smtp.url, CUADRA_MAILDIR: smtp.maildir, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    CUADRA_TEST_OUTPUT: outDir, CUADRA_PEPPOL_VALIDATOR: peppolValidator, CUADRA_MAILBOXES: smtp.mailboxes,
    // The campaigns' bounce mailbox (dovecot) and where exim delivers to it.
    MARKETING_IMAP_URL: imap.urlFor('bounces'), MARKETING_BOUNCE_ADDRESS: `bounces@${LOCAL_MAIL_DOMAIN}`, MARKETING_ALLOW_PRIVATE_SERVERS: '1', CUADRA_IMAP_PORT: String(imap.port),
  };
  pool = await startTestPool({
    repoRoot, mongoUrl: mongo.url, redisUrl: redis.url, env: { NODE_COMPILE_CACHE: compileCacheDir, ...testEnv }, logDir: path.join(outDir, 'logs'),
    peppolJar: peppolValidator, chromium: chromiumPath(),
  });
  const reportFile = path.join(outDir, 'vitest-report.json');
  const vitest = path.join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const testPool = pool;
  code = await phase('vitest', () => new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, `--reporter=${path.join(repoRoot, 'scripts', 'test-reporter.ts')}`, ...args], {
      cwd: repoRoot,
      stdio: 'inherit',
      env: { NODE_COMPILE_CACHE: compileCacheDir, ...process.env, ...testEnv, CUADRA_TEST_POOL: testPool.url, CUADRA_TEST_DURATIONS: durationsFile },
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.once('SIGINT', forward);
    process.once('SIGTERM', forward);
    child.on('exit', (exitCode) => resolve(exitCode ?? 1));
  }));
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
  const poolTimings = pool?.timings() ?? [];
  await pool?.stop().catch((err) => console.error(`[test] stopping the test pool: ${err}`));
  await stopSmtp?.().catch(() => undefined);
  await stopImap?.().catch(() => undefined);
  await stopAll().catch((err) => console.error(`[test] stopping servers: ${err}`));
  const checked = await typechecked;
  if (checked && checked.code !== 0) {
    console.error(`${checked.output.trimEnd()}\n[test] type check failed (tsgo -p tsconfig.json; npm run typecheck runs tsc)`);
    code = 1;
  } else if (checked) console.log('[test] types check');
  phases.push({ name: 'npm test, start to end', ms: performance.now() - runStarted });
  printDurations(poolTimings);
  if (process.env.CUADRA_RECORD_DURATIONS === '1') recordDurations();
  // Kept when something failed: the servers' logs are in it.
  if (code === 0) rmSync(runDir, { recursive: true, force: true });
}
process.exit(code);
