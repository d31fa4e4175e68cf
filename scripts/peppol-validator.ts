/**
 * Builds the Peppol BIS Billing 3.0 validator (issue 19): the small Java launcher in
 * `scripts/peppol-validator` around phive and its Peppol rules from Maven Central (the UBL 2.1
 * XSD, the CEN EN 16931 UBL Schematron and the OpenPEPPOL BIS 3 Schematron, run by Saxon-HE).
 * The runnable jar is kept at `.cache/peppol-validator/peppol-validator-<hash>.jar`, where
 * `<hash>` covers the launcher's pom.xml and src/; it is built with `mvn -q -B package` only
 * when missing. `.ci/run` calls this before `npm test`; `scripts/test.ts` calls it too (a no-op
 * once built) and gives the jar to the test pool, which runs one validator for the whole run
 * ({@link startPeppolValidator}; the tests ask it through subgraphs/invoices/test/peppol-validator.ts).
 *
 * `node scripts/peppol-validator.ts` builds it and prints the jar's path.
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';

const repoRoot = path.resolve(import.meta.dirname, '..');
const project = path.join(repoRoot, 'scripts', 'peppol-validator');
const cache = path.join(repoRoot, '.cache', 'peppol-validator');

function note(message: string): void {
  process.stderr.write(`[peppol-validator] ${message}\n`);
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const src = (await fsp.readdir(path.join(project, 'src'), { withFileTypes: true, recursive: true }))
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  for (const file of [path.join(project, 'pom.xml'), ...src]) {
    hash.update(path.relative(project, file).split(path.sep).join('/'));
    hash.update('\0');
    hash.update(await fsp.readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A cross-process lock: a directory holding its owner's pid; a dead owner's lock is taken over. */
async function lock(dir: string, done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    try {
      await fsp.mkdir(dir);
      await fsp.writeFile(path.join(dir, 'owner'), `${process.pid}\n`);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (done()) return false;
    const owner = Number((await fsp.readFile(path.join(dir, 'owner'), 'utf8').catch(() => '')).trim());
    const age = Date.now() - ((await fsp.stat(dir).catch(() => null))?.mtimeMs ?? Date.now());
    if ((owner > 0 && !isAlive(owner)) || (!(owner > 0) && age > 15_000)) {
      await fsp.rm(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${dir} (held by pid ${owner})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function mvn(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

let building: Promise<string> | undefined;

/** The path of the validator jar, built first if missing (concurrent callers wait for one build). */
export function buildPeppolValidatorJar(): Promise<string> {
  building ??= buildOnce().catch((error: unknown) => {
    building = undefined;
    throw error;
  });
  return building;
}

async function buildOnce(): Promise<string> {
  const hash = await sourceHash();
  const jar = path.join(cache, `peppol-validator-${hash}.jar`);
  if (fs.existsSync(jar)) return jar;
  await fsp.mkdir(cache, { recursive: true });
  const lockDir = path.join(cache, `build-${hash}.lock`);
  if (!(await lock(lockDir, () => fs.existsSync(jar)))) return jar;
  try {
    if (fs.existsSync(jar)) return jar;
    const buildDir = path.join(cache, `build-${hash}`);
    await fsp.rm(buildDir, { recursive: true, force: true });
    note('building the Peppol validator (mvn package; first run only, downloads phive and the Peppol rules from Maven Central)');
    const started = Date.now();
    const result = await mvn(['-q', '-B', '-Dstyle.color=never', '-f', path.join(project, 'pom.xml'), `-Dvalidator.buildDir=${buildDir}`, 'package']);
    const built = path.join(buildDir, 'peppol-validator.jar');
    if (result.code !== 0 || !fs.existsSync(built)) {
      const logFile = path.join(cache, `build-${hash}.log`);
      await fsp.writeFile(logFile, result.output);
      throw new Error(`building the Peppol validator failed (mvn exit ${result.code}); Maven output in ${logFile}:\n${result.output.trim().split('\n').slice(-30).join('\n')}`);
    }
    const partial = `${jar}.${process.pid}.partial`;
    await fsp.copyFile(built, partial);
    await fsp.rename(partial, jar); // atomic: a reader never sees half a jar
    await fsp.rm(buildDir, { recursive: true, force: true });
    note(`built ${path.relative(repoRoot, jar)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const name of await fsp.readdir(cache)) {
      if (/^peppol-validator-[0-9a-f]+\.jar$/.test(name) && name !== path.basename(jar)) await fsp.rm(path.join(cache, name), { force: true });
    }
    return jar;
  } finally {
    await fsp.rm(lockDir, { recursive: true, force: true });
  }
}

/** One finding of the official rules: a Schematron assertion (`BR-CO-15`, `PEPPOL-EN16931-R120`) or an XSD error. */
export interface PeppolFinding {
  level: string;
  id: string | null;
  text: string;
  location: string | null;
  artefact: string;
}

/** What the validator answers for one document. */
export interface PeppolVerdict {
  id: string;
  valid: boolean;
  vesid: string;
  artefacts: { type: string; path: string; skipped: boolean; errors: number }[];
  errors: PeppolFinding[];
  ms: number;
  failure?: string;
}

/** A running validator JVM (`--serve`): one process answering many documents. */
export interface PeppolValidatorProcess {
  /** The OpenPEPPOL rules release it validates against. */
  readonly rules: string;
  /** Whether the start-up compiled the Schematron of both document types, and how long that took. */
  readonly warmed: boolean;
  readonly warmUpMs: number;
  /** Validates one document; calls may overlap (answers come back in the order asked). */
  validate(id: string, xml: string): Promise<PeppolVerdict>;
  /** Ends the JVM (it also exits when its stdin closes, i.e. when this process goes away). */
  stop(): Promise<void>;
}

/**
 * Starts the validator jar as one JVM that validates one document per stdin line, and waits until
 * it has compiled its rules. C1 only and the serial collector: a JVM that mostly runs compiled
 * stylesheets starts faster so. `npm test` starts one for the whole run (scripts/test-pool.ts).
 */
export async function startPeppolValidator(jar: string): Promise<PeppolValidatorProcess> {
  const child = spawn('java', ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xss4m', '-jar', jar, '--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-4000); });
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.resolve(line));
  child.once('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the Peppol validator exited (${code}): ${stderr}`));
  });
  child.on('error', (error) => {
    for (const w of waiting.splice(0)) w.reject(error);
  });
  const next = () => new Promise<string>((resolve, reject) => waiting.push({ resolve, reject }));
  const ready = JSON.parse(await next()) as { ready: boolean; rules: string; warmed: boolean; warm_up_ms: number };
  return {
    rules: ready.rules,
    warmed: ready.warmed,
    warmUpMs: ready.warm_up_ms,
    async validate(id, xml) {
      if (!/^[\x21-\x7e]+$/.test(id)) throw new Error(`a document id is visible ASCII without spaces, not ${JSON.stringify(id)}`);
      const answer = next();
      child.stdin.write(`${id} ${Buffer.from(xml, 'utf8').toString('base64')}\n`);
      return JSON.parse(await answer) as PeppolVerdict;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await gone;
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  try {
    console.log(await buildPeppolValidatorJar());
  } catch (error) {
    console.error(`[peppol-validator] ${(error as Error).message}`);
    process.exit(1);
  }
}
