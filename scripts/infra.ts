/**
 * Launchers for the real servers Cuadra runs on in development, tests and CI:
 * a MongoDB wire-protocol server (mongo-java-server, through the project's own launcher in
 * `scripts/mongo-server`) and Debian's `redis-server`.
 *
 * Rules this module keeps (see /work/shared/INFRA.md):
 * - installs what is missing with apt-get when running as root, otherwise says exactly what
 *   to install;
 * - starts servers on 127.0.0.1 on free ports and waits until they answer;
 * - stops servers by the pid it started, and never signals a process it did not start;
 * - keeps build output under the git-ignored `.cache/` folder.
 *
 * Every server started here is recorded in a per-process registry: {@link stopAll} stops them
 * in reverse start order, and if the process exits without calling it, an `exit` hook sends
 * SIGTERM to whatever is still registered. The Java server additionally exits on its own when
 * this process dies (it watches a pipe on its stdin), so it cannot outlive its parent.
 *
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { noteRunProcess } from './test-reaper.ts';

/** Absolute path of the repository root (the folder holding the root package.json). */
export const repoRoot: string = path.resolve(import.meta.dirname, '..');

const mongoServerProject = path.join(repoRoot, 'scripts', 'mongo-server');
const mongoServerCache = path.join(repoRoot, '.cache', 'mongo-server');

/** A server started by this module. */
export interface RunningServer {
  /** Connection URL, `mongodb://127.0.0.1:<port>` or `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** TCP port on 127.0.0.1. */
  readonly port: number;
  /** Process id of the server process (the JVM, or the daemonized redis-server). */
  readonly pid: number;
  /** Where the server writes its log, if it writes one to a file. */
  readonly logFile?: string;
  /**
   * Stops this server: SIGTERM to {@link pid} only, up to 10 s for it to exit, then SIGKILL.
   * Safe to call more than once; later calls return the same promise.
   */
  stop(): Promise<void>;
}

/** Options for {@link startMongo}. */
export interface MongoOptions {
  /** `h2`: data kept in {@link file} (survives restarts); `memory`: throwaway. */
  backend: 'h2' | 'memory';
  /** The H2 data file (required for `h2`, not allowed for `memory`); created if missing. */
  file?: string;
  /** Port on 127.0.0.1; omitted or 0 = any free port, chosen by the server itself. */
  port?: number;
  /**
   * H2 only: `sync` (default) answers a write only once it is committed and synced to the file, so
   * a `kill -9` loses nothing acknowledged; `timer` is mongo-java-server's own once-a-second commit,
   * kept to measure what durability costs (bench/commit-policy.ts).
   */
  commit?: 'sync' | 'timer';
  /** Append the server's log (stderr) to this file; otherwise the last lines are kept in memory. */
  logFile?: string;
  /** The JVM's heap bound in MB (`-Xmx`); default {@link mongoMemory}'s choice. */
  /** How long to wait for the server to listen (ms; default 60 s) — a store opening a file of gigabytes takes longer. */
  startTimeoutMs?: number;
  heapMb?: number;
  /** H2 only: the page cache in MB (`--cache-mb`); default {@link mongoMemory}'s choice. */
  cacheMb?: number;
  /**
   * The scan detector (tests and benches only): every query the server answers by walking a whole
   * collection is appended to this file as a JSON line — `{db, collection, command, filter, sort?,
   * pipeline?, examined}`, values elided ({@link readScanReport}; ScanReport.java). Default:
   * `CUADRA_MONGO_REPORT_SCANS` (so `npm start` can be audited); unset, the detector is off.
   */
  reportScans?: string;
}

/** Options for {@link startRedis}. */
export interface RedisOptions {
  /** Port on 127.0.0.1; omitted = a free port. */
  port?: number;
  /** Folder for the pid file and log (`redis-<port>.pid`, `redis-<port>.log`); created if missing. */
  dir: string;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function note(message: string): void {
  process.stderr.write(`[infra] ${message}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves true when `promise` settles within `ms`, false otherwise; never leaves a timer behind. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const, () => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs a program to completion, capturing stdout and stderr together. Never throws on a non-zero exit. */
function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

function tailLines(text: string, lines: number): string {
  const all = text.replace(/\s+$/, '').split('\n');
  return all.slice(-lines).join('\n');
}

/** The last `bytes` bytes of a file, not before byte `from`; '' if it cannot be read. */
async function fileTail(file: string, bytes = 8192, from = 0): Promise<string> {
  try {
    const handle = await fsp.open(file, 'r');
    try {
      const { size } = await handle.stat();
      const start = Math.max(from, size - bytes, 0);
      const buffer = Buffer.alloc(Math.max(0, size - start));
      await handle.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

/** Finds an executable on PATH, without running a shell. */
function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Whether a process is alive. A zombie (exited, not yet reaped — daemons are reparented to
 * PID 1, which may reap late) counts as gone.
 */
function isAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "<pid> (<comm>) <state> ..." — comm may contain spaces or parentheses.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function commandLineOf(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Installing what is missing

let aptUpdate: Promise<void> | undefined;
let aptQueue: Promise<unknown> = Promise.resolve();

async function aptGet(args: readonly string[]): Promise<void> {
  const result = await run(
    'apt-get',
    ['-o', 'DPkg::Lock::Timeout=300', ...args],
    { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } },
  );
  if (result.code !== 0) {
    process.stderr.write(tailLines(result.output, 40) + '\n');
    throw new Error(`apt-get ${args.join(' ')} failed (exit ${result.code ?? result.signal})`);
  }
}

/** `apt-get update` (once per process) then `apt-get install -y <packages>`; one apt run at a time. */
function aptInstall(packages: readonly string[]): Promise<void> {
  const job = aptQueue.then(async () => {
    if (!aptUpdate) {
      note('apt-get update');
      aptUpdate = aptGet(['update']);
    }
    await aptUpdate;
    note(`apt-get install -y ${packages.join(' ')}`);
    await aptGet(['install', '-y', ...packages]);
  });
  aptQueue = job.catch(() => undefined);
  return job;
}

async function javaMajorVersion(): Promise<number | undefined> {
  try {
    const { output } = await run('java', ['-version']);
    const match = /version "(\d+)(?:\.(\d+))?/.exec(output);
    if (!match) return undefined;
    const first = Number(match[1]);
    return first === 1 ? Number(match[2]) : first;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure a Java 17+ JDK (`java`, `javac`) and Maven (`mvn`) are on PATH.
 * As root, installs the missing ones with `apt-get update` (once per process) and
 * `apt-get install -y openjdk-17-jdk-headless maven`; otherwise throws an Error naming
 * exactly what to install.
 */
export async function ensureJavaAndMaven(): Promise<void> {
  const missing: string[] = [];
  if (!which('java') || !which('javac') || ((await javaMajorVersion()) ?? 0) < 17) {
    missing.push('openjdk-17-jdk-headless');
  }
  if (!which('mvn')) missing.push('maven');
  if (missing.length === 0) return;
  if (!isRoot()) {
    throw new Error(
      `Java 17 (JDK) and Maven are needed to run the MongoDB test server. Install them with:\n` +
        `  sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`,
    );
  }
  await aptInstall(missing);
  if (!which('java') || !which('javac') || !which('mvn')) {
    throw new Error(`apt-get installed ${missing.join(' ')} but java, javac or mvn is still not on PATH`);
  }
  const major = await javaMajorVersion();
  if ((major ?? 0) < 17) {
    throw new Error(
      `openjdk-17-jdk-headless is installed but \`java\` is still version ${major ?? 'unknown'}; ` +
        `select Java 17 with: update-alternatives --config java`,
    );
  }
}

/**
 * Makes sure Debian's `redis-server` is on PATH. As root, installs it with `apt-get update`
 * (once per process) and `apt-get install -y redis-server`; otherwise throws an Error naming
 * exactly what to install.
 */
export async function ensureRedisServer(): Promise<void> {
  if (which('redis-server')) return;
  if (!isRoot()) {
    throw new Error(
      `redis-server is needed. Install it with:\n  sudo apt-get update && sudo apt-get install -y redis-server`,
    );
  }
  await aptInstall(['redis-server']);
  if (!which('redis-server')) {
    throw new Error('apt-get installed redis-server but it is still not on PATH');
  }
}

// ---------------------------------------------------------------------------------------------
// Building the MongoDB launcher jar

async function listFiles(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

async function launcherSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = [
    path.join(mongoServerProject, 'pom.xml'),
    ...(await listFiles(path.join(mongoServerProject, 'src'))),
  ];
  for (const file of files) {
    hash.update(path.relative(mongoServerProject, file).split(path.sep).join('/'));
    hash.update('\0');
    hash.update(await fsp.readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

const lockStaleAfterMs = 15_000;
const lockWaitMs = 15 * 60_000;

/**
 * Takes a cross-process lock (a directory created with mkdir, holding the owner's pid).
 * A lock whose owner is no longer alive is removed.
 */
async function acquireLock(lockDir: string, isDone: () => boolean): Promise<boolean> {
  const deadline = Date.now() + lockWaitMs;
  let announced = false;
  for (;;) {
    try {
      await fsp.mkdir(lockDir);
      await fsp.writeFile(path.join(lockDir, 'owner'), `${process.pid}\n`);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (isDone()) return false;
    // Is the holder still there?
    let ownerPid = NaN;
    try {
      ownerPid = Number((await fsp.readFile(path.join(lockDir, 'owner'), 'utf8')).trim());
    } catch {
      // not written yet, or just released
    }
    let age = 0;
    try {
      age = Date.now() - (await fsp.stat(lockDir)).mtimeMs;
    } catch {
      continue; // released in the meantime; try again
    }
    const ownerGone = Number.isInteger(ownerPid) && ownerPid > 0 ? !isAlive(ownerPid) : age > lockStaleAfterMs;
    if (ownerGone) {
      note(`removing stale lock ${path.relative(repoRoot, lockDir)}`);
      await fsp.rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announced) {
      note('waiting for another process that is building the MongoDB launcher');
      announced = true;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for the lock ${lockDir} (held by pid ${ownerPid})`);
    }
    await sleep(200);
  }
}

let jarBuild: Promise<string> | undefined;

/**
 * Returns the path of the runnable MongoDB launcher jar,
 * `.cache/mongo-server/mongo-launcher-<hash>.jar` under the repository root, where `<hash>`
 * covers `scripts/mongo-server/pom.xml` and its `src/` folder. Builds it with
 * `mvn -q -B package` only when that file is missing (about 4 s with a warm Maven cache).
 * Concurrent callers — in this process or others — wait for a single build.
 * Maven's output is shown only if the build fails (and is then part of the Error).
 * Installs Java and Maven first if needed (see {@link ensureJavaAndMaven}).
 */
export function buildMongoServerJar(): Promise<string> {
  jarBuild ??= buildMongoServerJarOnce().catch((error: unknown) => {
    jarBuild = undefined; // allow a retry
    throw error;
  });
  return jarBuild;
}

async function buildMongoServerJarOnce(): Promise<string> {
  const hash = await launcherSourceHash();
  const jar = path.join(mongoServerCache, `mongo-launcher-${hash}.jar`);
  if (fs.existsSync(jar)) return jar;

  await fsp.mkdir(mongoServerCache, { recursive: true });
  const lockDir = path.join(mongoServerCache, `build-${hash}.lock`);
  const haveLock = await acquireLock(lockDir, () => fs.existsSync(jar));
  if (!haveLock) return jar; // another process built it while we waited
  try {
    if (fs.existsSync(jar)) return jar;
    await ensureJavaAndMaven();
    const buildDir = path.join(mongoServerCache, `build-${hash}`);
    await fsp.rm(buildDir, { recursive: true, force: true });
    note('building the MongoDB launcher (mvn package; first run only)');
    const started = Date.now();
    const result = await run(
      'mvn',
      [
        '-q',
        '-B',
        '-Dstyle.color=never',
        '-f',
        path.join(mongoServerProject, 'pom.xml'),
        `-Dlauncher.buildDir=${buildDir}`,
        'package',
      ],
      { cwd: mongoServerProject },
    );
    const built = path.join(buildDir, 'mongo-launcher.jar');
    if (result.code !== 0 || !fs.existsSync(built)) {
      const logFile = path.join(mongoServerCache, `build-${hash}.log`);
      await fsp.writeFile(logFile, result.output);
      throw new Error(
        `building the MongoDB launcher failed (mvn exit ${result.code ?? result.signal}); ` +
          `full Maven output in ${logFile}, last lines:\n${tailLines(result.output, 40)}`,
      );
    }
    const partial = `${jar}.${process.pid}.partial`;
    await fsp.copyFile(built, partial);
    await fsp.rename(partial, jar); // atomic: readers never see half a jar
    await fsp.rm(buildDir, { recursive: true, force: true });
    await fsp.rm(path.join(mongoServerCache, `build-${hash}.log`), { force: true });
    note(`built ${path.relative(repoRoot, jar)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // Older builds are no longer needed (a JVM still running one keeps its open file).
    for (const name of await fsp.readdir(mongoServerCache)) {
      if (/^mongo-launcher-[0-9a-f]+\.jar$/.test(name) && name !== path.basename(jar)) {
        await fsp.rm(path.join(mongoServerCache, name), { force: true });
      }
    }
    return jar;
  } finally {
    await fsp.rm(lockDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Registry of what this process started

interface Registered {
  readonly name: string;
  readonly pid: number;
  /** Whether `pid` is still the process we started (guards against pid reuse). */
  readonly isOurs: () => boolean;
  readonly stop: () => Promise<void>;
}

const registry: Registered[] = [];
let exitHookInstalled = false;

function register(entry: Registered): void {
  registry.push(entry);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Last resort when the process ends without stopAll(): signal what we started, nothing else.
    process.on('exit', () => {
      for (const server of [...registry].reverse()) {
        if (server.isOurs()) signal(server.pid, 'SIGTERM');
      }
    });
  }
}

function unregister(entry: Registered): void {
  const index = registry.indexOf(entry);
  if (index >= 0) registry.splice(index, 1);
}

/**
 * Stops every server this process started and has not stopped yet, newest first, one after
 * the other. Processes started by anyone else are never touched. If some stops fail, the
 * others are still attempted and an AggregateError is thrown at the end.
 */
export async function stopAll(): Promise<void> {
  const errors: unknown[] = [];
  for (const server of [...registry].reverse()) {
    try {
      await server.stop();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, `stopAll: ${errors.length} server(s) failed to stop`);
}

const stopGraceMs = 10_000;

/**
 * Stops a process we started: SIGTERM, up to 10 s to exit, then SIGKILL. `waitForExit(ms)`
 * resolves true once the process is gone, false after `ms`. Does nothing once `isOurs()` is false.
 */
async function terminate(
  pid: number,
  isOurs: () => boolean,
  waitForExit: (ms: number) => Promise<boolean>,
): Promise<void> {
  if (!isOurs()) return;
  signal(pid, 'SIGTERM');
  if (await waitForExit(stopGraceMs)) return;
  if (!isOurs()) return;
  note(`pid ${pid} did not exit ${stopGraceMs / 1000} s after SIGTERM; sending SIGKILL`);
  signal(pid, 'SIGKILL');
  if (!(await waitForExit(5_000))) throw new Error(`pid ${pid} is still running after SIGKILL`);
}

// ---------------------------------------------------------------------------------------------
// Ports

/** Returns a TCP port that is free on 127.0.0.1 right now (listens on port 0, reads it, closes). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a listening socket'));
        return;
      }
      const { port } = address;
      server.close((error) => (error ? reject(error) : resolve(port)));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// MongoDB (mongo-java-server)

const mongoStartTimeoutMs = 60_000;

/** A positive whole number of MB from the environment, or undefined (unset); anything else throws. */
function envMb(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 64) throw new Error(`${name} must be a whole number of MB, at least 64; got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * The store's memory (issue 33, measured in docs/measurements.md "The store sized for its data"):
 * its JVM heap bound and, for H2, the page cache inside it. With `-Xmx768m` and a 256 MB cache the
 * 100,000 table's store (a 2.1 GB file, ~650,000 documents) spent 236 s in 464 full collections,
 * old generation 88 % full, and every p95 was a 7–8 s stall. The H2 store's heap is now an eighth of
 * the machine's memory, at least 768 MB and at most 4 GB (3 GB on a 24 GB machine); its page cache
 * stays 256 MB (the size bench/h2-id-lookup.ts measured). A heap bound is reserved, not used: the
 * JVM grows toward it only as the data needs (an empty workspace's store stays near its old size). The memory backend (tests, the
 * fuzzer: data that lives and dies with a run) keeps 768 MB, so a suite's several stores are as
 * before. `CUADRA_MONGO_HEAP_MB` and `CUADRA_MONGO_CACHE_MB` (or the options) override either.
 */
export function mongoMemory(backend: 'h2' | 'memory', given: { heapMb?: number; cacheMb?: number } = {}): { heapMb: number; cacheMb: number } {
  const machineMb = Math.floor(os.totalmem() / 1048576);
  const heapMb = given.heapMb ?? envMb('CUADRA_MONGO_HEAP_MB') ?? (backend === 'memory' ? 768 : Math.min(4096, Math.max(768, Math.floor(machineMb / 8))));
  const cacheMb = given.cacheMb ?? envMb('CUADRA_MONGO_CACHE_MB') ?? 256;
  if (backend === 'h2' && cacheMb > heapMb / 2) throw new Error(`startMongo: the H2 page cache (${cacheMb} MB) must be at most half the heap (${heapMb} MB)`);
  return { heapMb, cacheMb };
}

/**
 * Starts the project's MongoDB wire-protocol server (mongo-java-server 1.47 reporting
 * MongoDB 5.0 / wire version 13) on 127.0.0.1 with `java -Xmx<heap> -jar <launcher jar>` (heap and
 * H2 page cache: {@link mongoMemory}).
 * Builds the jar first if needed (see {@link buildMongoServerJar}).
 *
 * Waits for the launcher's `LISTENING <port>` line (at most 60 s; on timeout or early exit the
 * process is killed and the Error carries the end of its log). The server runs in its own
 * process group, does not keep this process's event loop alive, and shuts down cleanly by
 * itself when this process goes away (its stdin pipe closes).
 *
 * @returns `{ url: 'mongodb://127.0.0.1:<port>', port, pid, stop() }`
 */
export async function startMongo(opts: MongoOptions): Promise<RunningServer> {
  if (opts.backend !== 'h2' && opts.backend !== 'memory') {
    throw new Error(`startMongo: backend must be 'h2' or 'memory', got ${String(opts.backend)}`);
  }
  if (opts.backend === 'h2' && !opts.file) throw new Error("startMongo: backend 'h2' needs a file");
  if (opts.backend === 'memory' && opts.file) throw new Error("startMongo: backend 'memory' takes no file");

  const jar = await buildMongoServerJar();
  if (!which('java')) await ensureJavaAndMaven(); // the jar may be cached from an earlier setup
  const memory = mongoMemory(opts.backend, { heapMb: opts.heapMb, cacheMb: opts.cacheMb });
  const args = [`-Xmx${memory.heapMb}m`, '-jar', jar, '--backend', opts.backend];
  if (opts.file) {
    const file = path.resolve(opts.file);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    args.push('--file', file, '--commit', opts.commit ?? 'sync', '--cache-mb', String(memory.cacheMb));
  }
  args.push('--host', '127.0.0.1', '--port', String(opts.port ?? 0), '--exit-when-stdin-closes');
  const reportScans = opts.reportScans ?? process.env.CUADRA_MONGO_REPORT_SCANS;
  if (reportScans) args.push('--report-scans', path.resolve(reportScans));

  const logFile = opts.logFile ? path.resolve(opts.logFile) : undefined;
  let logFd: number | undefined;
  if (logFile) {
    await fsp.mkdir(path.dirname(logFile), { recursive: true });
    logFd = fs.openSync(logFile, 'a');
  }
  let child: ChildProcess;
  try {
    child = spawn('java', args, {
      // stdin: a pipe we never write to; when this process dies it closes and the server exits.
      stdio: ['pipe', 'pipe', logFd ?? 'pipe'],
      // Own process group: a Ctrl-C in the terminal reaches this process, which then stops the
      // servers in order, instead of hitting the JVM at the same moment.
      detached: true,
    });
  } finally {
    if (logFd !== undefined) fs.closeSync(logFd); // the child holds its own copy
  }

  child.stdin?.on('error', () => {}); // never written to; it only signals our lifetime
  // Without a log file, keep the last 16 KB of stderr for error messages (and keep the pipe drained).
  let memoryLog = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    memoryLog = (memoryLog + chunk.toString('utf8')).slice(-16_384);
  });
  const logTail = async (): Promise<string> => tailLines(logFile ? await fileTail(logFile) : memoryLog, 30);

  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });

  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(
        () => reject(new Error(`no LISTENING line within ${(opts.startTimeoutMs ?? mongoStartTimeoutMs) / 1000} s`)),
        opts.startTimeoutMs ?? mongoStartTimeoutMs,
      );
      const done = (): void => {
        clearTimeout(timer);
        child.stdout?.removeListener('data', onData);
      };
      const onData = (chunk: Buffer): void => {
        stdout += chunk.toString('utf8');
        const match = /^LISTENING (\d+)\r?$/m.exec(stdout);
        if (match) {
          done();
          resolve(Number(match[1]));
        }
      };
      child.stdout?.on('data', onData);
      child.once('error', (error) => {
        done();
        reject(error);
      });
      child.once('exit', (code, sig) => {
        done();
        reject(new Error(`the server exited before it was ready (exit ${code ?? sig})`));
      });
    });
  } catch (error) {
    if (!exited && child.pid !== undefined) {
      signal(child.pid, 'SIGKILL');
      await settlesWithin(exitPromise, 5_000);
    }
    const where = opts.backend === 'h2' ? `h2 file ${opts.file}` : 'memory';
    throw new Error(
      `startMongo (${where}) failed: ${(error as Error).message}\n` +
        `--- log${logFile ? ` (${logFile})` : ''} ---\n${await logTail()}`,
    );
  }

  const pid = child.pid as number;
  noteRunProcess(pid);
  // Keep draining stdout; let this process exit even while the server runs.
  child.stdout?.resume();
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as net.Socket | null)?.unref?.();
  }

  const isOurs = (): boolean => !exited && child.exitCode === null && child.signalCode === null;
  let stopping: Promise<void> | undefined;
  const entry: Registered = {
    name: `mongo ${opts.backend} :${port}`,
    pid,
    isOurs,
    stop: () => {
      stopping ??= (async () => {
        try {
          await terminate(pid, isOurs, (ms) => settlesWithin(exitPromise, ms));
        } finally {
          unregister(entry);
        }
      })();
      return stopping;
    },
  };
  register(entry);
  return { url: `mongodb://127.0.0.1:${port}`, port, pid, logFile, stop: entry.stop };
}

// ---------------------------------------------------------------------------------------------
// Redis

function encodeCommand(args: readonly string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(''), 'utf8');
}

/**
 * Sends one command over RESP and returns the reply as text (simple string, bulk string or
 * integer). Rejects on a connection error, an error reply or after `timeoutMs`.
 */
function redisCommand(port: number, args: readonly string[], timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let buffer = Buffer.alloc(0);
    const finish = (error: Error | undefined, value?: string): void => {
      socket.destroy();
      if (error) reject(error);
      else resolve(value as string);
    };
    socket.setTimeout(timeoutMs, () => finish(new Error('timeout')));
    socket.on('error', (error) => finish(error));
    socket.on('connect', () => socket.write(encodeCommand(args)));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const lineEnd = buffer.indexOf('\r\n');
      if (lineEnd < 0) return;
      const type = String.fromCharCode(buffer[0]);
      const line = buffer.subarray(1, lineEnd).toString('utf8');
      if (type === '+' || type === ':') return finish(undefined, line);
      if (type === '-') return finish(new Error(`redis: ${line}`));
      if (type === '$') {
        const length = Number(line);
        if (length < 0) return finish(undefined, '');
        if (buffer.length < lineEnd + 2 + length + 2) return; // wait for more
        return finish(undefined, buffer.subarray(lineEnd + 2, lineEnd + 2 + length).toString('utf8'));
      }
      finish(new Error(`unexpected redis reply ${JSON.stringify(buffer.subarray(0, 40).toString())}`));
    });
  });
}

const redisStartTimeoutMs = 30_000;

async function readPid(pidFile: string): Promise<number | undefined> {
  try {
    const pid = Number((await fsp.readFile(pidFile, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts Debian's `redis-server` daemonized on 127.0.0.1 with no persistence:
 * `redis-server --port <p> --bind 127.0.0.1 --save '' --appendonly no --daemonize yes
 * --pidfile <dir>/redis-<p>.pid --dir <dir> --logfile <dir>/redis-<p>.log`.
 * Installs redis-server first if needed (see {@link ensureRedisServer}).
 *
 * Waits until PING answers PONG over TCP and `INFO server` reports the pid from the pid file
 * (so it is our server answering, not another one on the same port), at most 10 s. With no
 * `port` given it picks a free one, and tries another if that one is taken meanwhile.
 *
 * @returns `{ url: 'redis://127.0.0.1:<port>', port, pid, stop() }`, `pid` read from the pid file.
 */
export async function startRedis(opts: RedisOptions): Promise<RunningServer> {
  await ensureRedisServer();
  const dir = path.resolve(opts.dir);
  await fsp.mkdir(dir, { recursive: true });
  const attempts = opts.port ? 1 : 3;
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await startRedisOn(port, dir);
    } catch (error) {
      lastError = error as Error;
      if (!(error instanceof PortTakenError)) break;
    }
  }
  throw lastError;
}

class PortTakenError extends Error {}

async function startRedisOn(port: number, dir: string): Promise<RunningServer> {
  const pidFile = path.join(dir, `redis-${port}.pid`);
  const logFile = path.join(dir, `redis-${port}.log`);
  await fsp.rm(pidFile, { force: true }); // a stale one from an earlier run would mislead us
  const logStart = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  /** What this start wrote to the log (the file may hold earlier runs on the same port). */
  const newLog = (): Promise<string> => fileTail(logFile, 64 * 1024, logStart);

  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--save', '',
    '--appendonly', 'no',
    '--daemonize', 'yes',
    '--pidfile', pidFile,
    '--dir', dir,
    '--logfile', logFile,
  ];
  const launch = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    execFile('redis-server', args, { timeout: redisStartTimeoutMs }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, output });
    });
  });
  if (launch.code !== 0) {
    throw new Error(`redis-server exited with ${launch.code}:\n${tailLines(launch.output + (await newLog()), 30)}`);
  }

  const deadline = Date.now() + redisStartTimeoutMs;
  let pid: number | undefined;
  let problem = 'not answering';
  while (Date.now() < deadline) {
    const log = await newLog();
    if (/Failed listening on port|Address already in use/i.test(log)) {
      throw new PortTakenError(`redis-server could not listen on 127.0.0.1:${port}:\n${tailLines(log, 20)}`);
    }
    try {
      if ((await redisCommand(port, ['PING'])) === 'PONG') {
        pid = await readPid(pidFile);
        // Daemonized, and its title overwrites its environment: noted for a test run's reaper by pid.
        if (pid !== undefined) noteRunProcess(pid);
        const info = await redisCommand(port, ['INFO', 'server']);
        const answering = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
        if (pid !== undefined && answering === pid) break;
        if (pid === undefined) {
          problem = 'PONG but no pid file yet';
        } else {
          throw new PortTakenError(
            `another redis-server (pid ${answering}) answers on port ${port}; ours is pid ${pid}`,
          );
        }
        pid = undefined;
      }
    } catch (error) {
      if (error instanceof PortTakenError) {
        const ours = await readPid(pidFile);
        if (ours !== undefined && isRedis(ours, port)) signal(ours, 'SIGTERM');
        throw error;
      }
      problem = (error as Error).message;
    }
    await sleep(50);
  }
  if (pid === undefined) {
    const ours = await readPid(pidFile);
    if (ours !== undefined && isRedis(ours, port)) {
      signal(ours, 'SIGKILL');
      await waitUntilGone(ours, 5_000);
    }
    throw new Error(
      `redis-server on port ${port} was not ready within ${redisStartTimeoutMs / 1000} s (${problem})\n` +
        `--- log (${logFile}) ---\n${tailLines(await newLog(), 30)}`,
    );
  }

  const serverPid = pid;
  const isOurs = (): boolean => isAlive(serverPid) && isRedis(serverPid, port);
  let stopping: Promise<void> | undefined;
  const entry: Registered = {
    name: `redis :${port}`,
    pid: serverPid,
    isOurs,
    stop: () => {
      stopping ??= (async () => {
        try {
          await terminate(serverPid, isOurs, (ms) => waitUntilGone(serverPid, ms));
        } finally {
          unregister(entry);
        }
      })();
      return stopping;
    },
  };
  register(entry);
  return { url: `redis://127.0.0.1:${port}`, port, pid: serverPid, logFile, stop: entry.stop };
}

/**
 * Whether `pid` is a redis-server for `port`: its process title reads
 * `redis-server 127.0.0.1:<port>` once running, its command line `--port <port>` before that.
 */
function isRedis(pid: number, port: number): boolean {
  if (!isAlive(pid)) return false;
  const commandLine = commandLineOf(pid);
  if (commandLine === undefined) return true; // no /proc: trust the pid file
  return (
    commandLine.includes('redis-server') &&
    (commandLine.includes(`:${port}`) || commandLine.includes(`--port ${port} `))
  );
}

/** One query the store answered by walking a whole collection (the scan detector, {@link MongoOptions.reportScans}). */
export interface ScanSeen {
  /** When (ms since the epoch). */
  t: number;
  db: string;
  collection: string;
  /** The command that asked: find, update, delete, findAndModify, count, distinct, aggregate, … */
  command: string;
  /** The filter's shape: field names and operators kept, every value `"?"`. */
  filter: unknown;
  sort?: unknown;
  /** An aggregate's stages, shaped the same way. */
  pipeline?: unknown;
  /** Documents the walk read: the collection's size at the time. */
  examined: number;
}

/** The scans written to `file` so far (an absent file: none yet). */
export function readScanReport(file: string): ScanSeen[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as ScanSeen);
}
