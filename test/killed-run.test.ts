import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { repoRoot } from '../scripts/infra.ts';
import { until } from './helpers/until.ts';

// A killed `npm test` leaves nothing behind (scripts/test-reaper.ts): a run of one file is started in a
// child, its system's services are frozen as the pool freezes an idle system (SIGSTOP), and the run's
// own process is SIGKILLed — as an out-of-memory kill or CI's timeout would. Then no process of that run
// may be left: none carrying the probe this file put in the run's environment (every process the run
// starts inherits it), and none of the servers the run wrote a pid file for (Redis overwrites its
// environment with its title, and daemonizes).

const probe = `KILLED_RUN_PROBE_${randomBytes(6).toString('hex')}`;
const innerFile = 'test/api-keys.test.ts';
let runnerPid: number | undefined;

function processesWith(mark: string): { pid: number; command: string; state: string }[] {
  const found: { pid: number; command: string; state: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').includes(mark)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z') continue;
      found.push({ pid, state, command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 140) });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The live processes named by the pid files under the run's folder (Redis, exim, dovecot). */
function pidFilesAlive(runPid: number): { pid: number; file: string }[] {
  const dir = path.join(repoRoot, 'test-output', `servers-${runPid}`);
  const alive: { pid: number; file: string }[] = [];
  let files: string[] = [];
  try {
    files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.pid'));
  } catch {
    return [];
  }
  for (const file of files) {
    const pid = Number(readFileSync(path.join(dir, file), 'utf8').trim());
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') alive.push({ pid, file });
    } catch {
      // gone
    }
  }
  return alive;
}

const leftOf = (runPid: number) => [...processesWith(probe).map((p) => `${p.pid} ${p.state} ${p.command}`), ...pidFilesAlive(runPid).map((p) => `${p.pid} from ${p.file}`)];

// Whatever the test found, nothing of the inner run outlives this file.
afterAll(() => {
  for (const pid of [...processesWith(probe).map((p) => p.pid), ...(runnerPid ? pidFilesAlive(runnerPid).map((p) => p.pid) : [])]) {
    for (const signal of ['SIGKILL', 'SIGCONT'] as const) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone
      }
    }
  }
  // The killed run's folder (its servers' logs) and its reaper's log: throwaway.
  if (runnerPid) {
    rmSync(path.join(repoRoot, 'test-output', `servers-${runnerPid}`), { recursive: true, force: true });
    rmSync(path.join(repoRoot, 'test-output', `reaped-${runnerPid}.log`), { force: true });
  }
});

describe('a killed npm test', () => {
  it('leaves no process of its run behind, frozen systems included', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CUADRA_SKIP_TYPECHECK: '1', [probe]: '1' };
    // The run inside this one is a run of its own: not this worker's vitest, not this run's pool; no
    // type check (CI's CUADRA_SKIP_TYPECHECK is otherwise ignored): it is killed long before it ends.
    for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'CUADRA_TEST_POOL' || key === 'CI') delete env[key];
    const runner = spawn(process.execPath, ['scripts/test.ts', innerFile], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    runnerPid = runner.pid!;
    let output = '';
    runner.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    runner.stderr!.on('data', (d: Buffer) => (output += d.toString()));

    // Mid-run: the file's system is up (its seven subgraphs and the gateway, each a `src/index.ts`).
    const services = () => processesWith(probe).filter((p) => p.command.includes('/src/index.ts'));
    const up = await until(async () => services(), (s) => s.length >= SUBGRAPHS.length + 1 || runner.exitCode !== null, 200_000, 250);
    expect(runner.exitCode, `the run ended before its system was up:\n${output}`).toBeNull();
    expect(up.length).toBeGreaterThanOrEqual(SUBGRAPHS.length + 1);
    // Frozen, as the pool freezes a system no file is using.
    for (const p of up) process.kill(p.pid, 'SIGSTOP');
    const before = processesWith(probe);
    expect(before.some((p) => p.command.includes('vitest'))).toBe(true);

    const killed = new Promise<void>((resolve) => runner.once('exit', () => resolve()));
    process.kill(runnerPid, 'SIGKILL');
    await killed;

    // A bound to wait within, not a timing assertion: the reaper sees the run's pipe close at once.
    const left = await until(async () => leftOf(runnerPid!), (l) => l.length === 0, 45_000, 250);
    expect(left, `${before.length} processes of the run before the kill; left after it:\n${left.join('\n')}`).toEqual([]);
  }, 300_000);
});
