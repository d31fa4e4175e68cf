// The bench side of shared/src/probe.ts: each SIGUSR2 closes a measuring window of a service
// process (which writes <dir>/<name>.<n>.json, and .cpuprofile when profiling) and opens the next.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface ProbeWindow {
  name: string; pid: number; window: number; wall_ms: number; cpu_us: number;
  mongo: Record<string, number>; redisCommands: Record<string, number>; redisRoundTrips: number;
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number };
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

export const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
