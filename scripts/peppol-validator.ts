/**
 * Builds the Peppol BIS Billing 3.0 validator (issue 19): the small Java launcher in
 * `scripts/peppol-validator` around phive and its Peppol rules from Maven Central (the UBL 2.1
 * XSD, the CEN EN 16931 UBL Schematron and the OpenPEPPOL BIS 3 Schematron, run by Saxon-HE).
 * The runnable jar is kept at `.cache/peppol-validator/peppol-validator-<hash>.jar`, where
 * `<hash>` covers the launcher's pom.xml and src/; it is built with `mvn -q -B package` only
 * when missing. `.ci/run` calls this before `npm test`; `scripts/test.ts` calls it too (a no-op
 * once built) and hands the path to the tests as `CUADRA_PEPPOL_VALIDATOR`.
 *
 * `node scripts/peppol-validator.ts` builds it and prints the jar's path.
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

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

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  try {
    console.log(await buildPeppolValidatorJar());
  } catch (error) {
    console.error(`[peppol-validator] ${(error as Error).message}`);
    process.exit(1);
  }
}
