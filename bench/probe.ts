// The bench side of shared/src/probe.ts: each SIGUSR2 closes a measuring window of a service
// process (which writes <dir>/<name>.<n>.json, and .cpuprofile when profiling) and opens the next.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface ProbeWindow {
  name: string; pid: number; window: number; wall_ms: number; cpu_us: number;
  mongo: Record<string, number>; redisCommands: Record<string, number>; redisRoundTrips: number;
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers?: number; newSpace?: number; heapPeak?: number; heapLimit?: number };
  /** The service's last idle-trim collections (shared/src/memory-trim.ts). */
  trims?: { at: number; before: number; after: number; ms: number; busy: boolean }[];
}

/** One probed process: `cut()` ends the current window and answers its figures. */
export class Probe {
  readonly #dir: string;
  readonly #name: string;
  readonly #pid: number;
  #next = 0;
  constructor(dir: string, name: string, pid: number) {
    this.#dir = dir;
    this.#name = name;
    this.#pid = pid;
  }

  async cut(): Promise<ProbeWindow & { profile?: string }> {
    const n = this.#next++;
    const file = path.join(this.#dir, `${this.#name}.${n}.json`);
    process.kill(this.#pid, 'SIGUSR2');
    for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
    // The profile (when asked for) is written before the counters.
    const w = JSON.parse(readFileSync(file, 'utf8')) as ProbeWindow;
    const profile = path.join(this.#dir, `${this.#name}.${n}.cpuprofile`);
    return existsSync(profile) ? { ...w, profile } : w;
  }
}

export const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** `find 1.00, insert 0.50` per call, largest first. */
export function perCall(r: Record<string, number>, calls: number): string {
  return Object.entries(r).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / calls).toFixed(2)}`).join(', ') || '—';
}

/** Where a profile's frame is: its package, `node:` module, or the repository file (`shared/…`, `subgraphs/crm/…`). */
export function where(url: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const m = /\/(shared|gateway|subgraphs\/[a-z]+)\/src\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : path.basename(url);
}

export const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

const CLOCK_TICKS = 100; // USER_HZ on Linux (getconf CLK_TCK)

/** CPU time (µs) a process has used so far, from /proc/<pid>/stat (utime + stime; children not counted). */
export function processCpuUs(pid: number, file = `/proc/${pid}/stat`): number {
  try {
    const stat = readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * CPU time (µs) the process's main thread has used so far (/proc/<pid>/task/<pid>/stat): the thread
 * JavaScript runs on. What the process used beyond it ran on V8's helper threads (concurrent and
 * parallel garbage collection, the optimising compiler) or libuv's pool.
 */
export function mainThreadCpuUs(pid: number): number {
  return processCpuUs(pid, `/proc/${pid}/task/${pid}/stat`);
}

/**
 * Busy, stolen and total CPU time (µs) of the whole machine so far, from /proc/stat's `cpu` line.
 * `steal` is time the hypervisor gave another guest while this one wanted to run: not ours, and a
 * sign the run was disturbed from outside.
 */
export function machineCpuUs(): { busy: number; steal: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = line;
  const busy = user + nice + system + irq + softirq;
  return { busy: (busy * 1e6) / CLOCK_TICKS, steal: (steal * 1e6) / CLOCK_TICKS, total: ((busy + steal + idle + iowait) * 1e6) / CLOCK_TICKS };
}

/**
 * Every process of a bench, read from /proc before and after a window: where the machine's CPU
 * went per call — the figure that bounds throughput when the cores are all busy.
 */
export class MachineMeter {
  readonly #pids: Record<string, number>;
  #start: { machine: { busy: number; steal: number; total: number }; procs: Record<string, number>; main: Record<string, number> } | null = null;
  constructor(pids: Record<string, number>) {
    this.#pids = pids;
  }
  begin(): void {
    this.#start = {
      machine: machineCpuUs(),
      procs: Object.fromEntries(Object.entries(this.#pids).map(([k, pid]) => [k, processCpuUs(pid)])),
      main: Object.fromEntries(Object.entries(this.#pids).map(([k, pid]) => [k, mainThreadCpuUs(pid)])),
    };
  }
  /**
   * Per call: µs of CPU by process (and `other`: the rest of the machine), the part of it on each
   * process's main thread (`mainPerCall`), and how busy the cores were.
   */
  end(calls: number): { busyShare: number; stealShare: number; perCall: Record<string, number>; mainPerCall: Record<string, number> } {
    const start = this.#start!;
    const machine = machineCpuUs();
    const perCall: Record<string, number> = {};
    const mainPerCall: Record<string, number> = {};
    let named = 0;
    for (const [k, pid] of Object.entries(this.#pids)) {
      const used = processCpuUs(pid) - start.procs[k];
      named += used;
      perCall[k] = used / calls;
      mainPerCall[k] = (mainThreadCpuUs(pid) - start.main[k]) / calls;
    }
    const busy = machine.busy - start.machine.busy;
    perCall.other = Math.max(0, busy - named) / calls;
    const total = Math.max(1, machine.total - start.machine.total);
    return { busyShare: busy / total, stealShare: (machine.steal - start.machine.steal) / total, perCall, mainPerCall };
  }
}
