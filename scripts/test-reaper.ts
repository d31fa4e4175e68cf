/**
 * Makes every process an `npm test` run starts die with the run, however the run ends (issue 33).
 *
 * `scripts/test.ts` stops what it started when it ends — but not when it is killed (SIGKILL, an
 * out-of-memory kill, CI's timeout): its vitest, vitest's workers, the pool's systems — frozen ones
 * (SIGSTOPped by scripts/test-pool.ts) included — Redis, exim and dovecot then ran on for good.
 *
 * So the run starts, before anything else, a **reaper**: a small process in a session of its own
 * (a Ctrl-C or a kill of the run's process group does not reach it) that holds the read end of a pipe
 * whose write end only the run's process holds. When the run's process is gone, however it went, the
 * kernel closes that pipe; the reaper then SIGKILLs (and SIGCONTs) every process of the run, found two
 * ways, in rounds until a few rounds in a row find none:
 * - **the run's mark**: the run puts a random token in its environment (`CUADRA_TEST_RUN_MARKS`,
 *   a `:`-separated list, a nested run adding its own), so every process it starts, and every process
 *   those start, carries it; the reaper reads `/proc/<pid>/environ`;
 * - **the run's list**: a process that overwrites its environment area with its title (redis-server)
 *   or drops it is noted by whoever starts it (scripts/infra.ts `noteRunProcess`: Redis, the
 *   MongoDB-protocol server, exim, dovecot) in the files named by `CUADRA_TEST_RUN_PIDS`, with its
 *   start time, so a pid used again by another process is never signalled.
 * After a run that ended well the reaper finds nothing (the run stopped everything) and exits; what it
 * does kill it writes to `test-output/reaped-<run pid>.log`.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The environment variable holding the marks of the runs a process belongs to (`:`-separated). */
export const RUN_MARKS = 'CUADRA_TEST_RUN_MARKS';
/** The environment variable naming the files processes that lose their environment are noted in (`:`-separated). */
export const RUN_PIDS = 'CUADRA_TEST_RUN_PIDS';

/** The start time of a process (clock ticks since boot, /proc/<pid>/stat field 22); undefined when it is gone or a zombie. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/**
 * Notes a process in the run's list (`CUADRA_TEST_RUN_PIDS`), for a process whose environment the
 * reaper may not be able to read. Outside a test run it does nothing.
 */
export function noteRunProcess(pid: number, env: NodeJS.ProcessEnv = process.env): void {
  const files = (env[RUN_PIDS] ?? '').split(':').filter(Boolean);
  const started = startTimeOf(pid);
  if (files.length === 0 || started === undefined) return;
  for (const file of files) {
    try {
      appendFileSync(file, `${pid} ${started}\n`);
    } catch {
      // that run is gone: its reaper has already swept
    }
  }
}

/** Every live process (not a zombie) whose environment holds `mark`, this one excepted. */
export function processesMarked(mark: string): number[] {
  const needle = Buffer.from(mark);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      // A zombie's environment reads empty: it is dead already, its parent has not reaped it.
      if (readFileSync(`/proc/${pid}/environ`).includes(needle)) found.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** The noted processes of a run's list that are still the processes noted (same start time). */
function processesListed(file: string): number[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const line of text.split('\n')) {
    const [pid, started] = line.trim().split(' ');
    if (pid && started && startTimeOf(Number(pid)) === started) found.push(Number(pid));
  }
  return found;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 160);
  } catch {
    return '?';
  }
}

/**
 * Starts the reaper of this run: `mark` is the run's token (already in this process's
 * `CUADRA_TEST_RUN_MARKS`), `pidsFile` its list, `logFile` where it says what it killed. The reaper
 * holds the pipe's read end; this process keeps the write end open (unreferenced: it never keeps the
 * process alive) until it exits.
 */
export function startReaper(opts: { mark: string; pidsFile: string; logFile: string }): void {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), opts.mark, opts.pidsFile, opts.logFile], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.unref();
  child.stdin!.on('error', () => undefined);
  (child.stdin as unknown as { unref(): void }).unref();
}

/** The reaper itself: waits for the pipe to close, then kills what is left of the run. */
async function reap(mark: string, pidsFile: string, logFile: string): Promise<void> {
  // Not ended by what ends the run: a Ctrl-C reaches the run's process group, not this session; a
  // SIGTERM or SIGHUP meant for the run is ignored here.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
  await new Promise<void>((resolve) => {
    process.stdin.on('end', resolve);
    process.stdin.on('close', resolve);
    process.stdin.on('error', () => resolve());
    process.stdin.resume();
  });
  const killed = new Map<number, string>();
  // Rounds: a process being killed may have started another meanwhile (vitest a worker, a worker a
  // system); three empty rounds in a row end it, 30 s at most.
  for (let quiet = 0, deadline = Date.now() + 30_000; quiet < 3 && Date.now() < deadline;) {
    const found = [...new Set([...processesMarked(mark), ...processesListed(pidsFile)])];
    quiet = found.length === 0 ? quiet + 1 : 0;
    for (const pid of found) {
      if (!killed.has(pid)) killed.set(pid, commandOf(pid));
      // SIGKILL ends a stopped (frozen) process too; SIGCONT after it lets the kernel finish it at once.
      for (const signal of ['SIGKILL', 'SIGCONT'] as const) {
        try {
          process.kill(pid, signal);
        } catch {
          // already gone
        }
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (killed.size > 0) {
    mkdirSync(path.dirname(logFile), { recursive: true });
    appendFileSync(logFile, `${new Date().toISOString()} the run ended with ${killed.size} of its processes still running; killed:\n${[...killed].map(([pid, cmd]) => `  ${pid} ${cmd}`).join('\n')}\n`);
  }
  rmSync(pidsFile, { force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [mark, pidsFile, logFile] = process.argv.slice(2);
  await reap(mark, pidsFile, logFile);
  process.exit(0);
}
