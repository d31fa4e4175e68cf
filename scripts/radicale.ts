// A real CalDAV server for the tests: Radicale 3 from PyPI (it answers sync-collection, RFC 6578,
// and calendar-query with expand), installed by `npm test` (and .ci/run) into its own virtual
// environment under .cache/radicale. Tests start one on a free loopback port with a storage folder
// of their own; `npm start` never needs it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './infra.ts';

/** The Radicale version .ci/run installs. */
export const RADICALE_VERSION = '3.9.0';
const VENV = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.cache', 'radicale');
const PYTHON = path.join(VENV, 'bin', 'python');
const run = promisify(execFile);

async function installedVersion(): Promise<string | undefined> {
  try {
    return (await run(PYTHON, ['-m', 'radicale', '--version'])).stdout.trim();
  } catch {
    return undefined;
  }
}

/**
 * Makes sure Radicale {@link RADICALE_VERSION} is in .cache/radicale (a no-op once it is): a
 * virtual environment of its own (Debian's package is older than the calendar tests need), pip
 * from PyPI. `npm test` calls it before the tests start, so a fresh clone needs nothing by hand
 * but Python 3 with venv.
 */
export async function ensureRadicale(log: (line: string) => void = (l) => console.log(`[radicale] ${l}`)): Promise<void> {
  if ((await installedVersion()) === RADICALE_VERSION) return;
  log(`installing Radicale ${RADICALE_VERSION} into .cache/radicale (pip, once)`);
  rmSync(VENV, { recursive: true, force: true });
  try {
    await run('python3', ['-m', 'venv', VENV]);
  } catch (error) {
    throw new Error(`python3 -m venv failed — the calendar tests need Python 3 with venv (Debian: apt-get install -y python3-venv): ${(error as Error).message}`);
  }
  await run(path.join(VENV, 'bin', 'pip'), ['install', '-q', `radicale==${RADICALE_VERSION}`], { maxBuffer: 16 * 1024 * 1024 });
  const version = await installedVersion();
  if (version !== RADICALE_VERSION) throw new Error(`pip installed Radicale but it reports version ${version ?? 'none'}, not ${RADICALE_VERSION}`);
}

/** A running Radicale. */
export interface RunningRadicale {
  /** `http://127.0.0.1:<port>`: the server's root (principals live at `/<user>/`). */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts Radicale on a free loopback port storing under `dir`, with htpasswd authentication of the
 * given users (plain passwords: a test server) and the owner-only rights (each user sees only their
 * own collections). Resolves once it answers HTTP.
 */
export async function startRadicale(opts: { dir: string; users: Record<string, string> }): Promise<RunningRadicale> {
  if (!existsSync(PYTHON)) {
    throw new Error(`Radicale is not installed in .cache/radicale: \`npm test\` installs it (ensureRadicale in scripts/radicale.ts)`);
  }
  const dir = path.resolve(opts.dir);
  mkdirSync(path.join(dir, 'collections'), { recursive: true });
  const users = path.join(dir, 'users');
  writeFileSync(users, Object.entries(opts.users).map(([u, p]) => `${u}:${p}\n`).join(''));
  const config = path.join(dir, 'config');
  const port = await freePort();
  writeFileSync(config, [
    '[server]', `hosts = 127.0.0.1:${port}`,
    '[auth]', 'type = htpasswd', `htpasswd_filename = ${users}`, 'htpasswd_encryption = plain',
    '[rights]', 'type = owner_only',
    '[storage]', `filesystem_folder = ${path.join(dir, 'collections')}`,
    '[logging]', 'level = warning', '',
  ].join('\n'));
  const child: ChildProcess = spawn(PYTHON, ['-m', 'radicale', '--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`Radicale exited: ${stderr}`);
    try {
      await fetch(`${url}/.web/`);
      break;
    } catch {
      if (i > 200) throw new Error(`Radicale did not answer on ${url}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await ensureRadicale();
}
