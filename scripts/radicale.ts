// A real CalDAV server for the tests: Radicale 3 from PyPI (it answers sync-collection, RFC 6578,
// and calendar-query with expand), installed by .ci/run into its own virtual environment under
// .cache/radicale. Tests start one on a free loopback port with a storage folder of their own;
// `npm start` never needs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './infra.ts';

/** The Radicale version .ci/run installs. */
export const RADICALE_VERSION = '3.9.0';
const PYTHON = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.cache', 'radicale', 'bin', 'python');

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
    throw new Error(`Radicale is not installed: python3 -m venv .cache/radicale && .cache/radicale/bin/pip install radicale==${RADICALE_VERSION} (.ci/run does this)`);
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
