import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives back the heap pages V8 keeps after a burst (issue 33 "Memory", mem12).
 *
 * Measured on Node 24 (V8 13.6): when a burst of reads raises the heap and the collector frees it
 * again, V8 keeps the freed 256 KB pages mapped and resident for reuse — `heapTotal` falls back
 * while the RSS stays at the burst's peak (a bare script: 400,000 objects dropped and collected,
 * heapTotal 101 → 5 MB, RSS 151 → 139 MB, the pages still there after 12 s of idle and the memory
 * reducer). Only a "last resort" full collection (what V8 does under memory pressure) releases
 * them: RSS 139 → 54 MB, 26 ms on that heap. Every service's growth under bench/scale.ts's reads
 * was these pages (docs/measurements.md "What a service's memory grows by").
 *
 * So each service checks every `intervalMs`: when it has been idle over the last interval (its
 * event loop busy less than `idleShare` of the time) and its RSS is `growthMb` above what it was
 * after the last trim (or at start), it runs that collection once. An idle process pays one full
 * collection per `growthMb` of growth, never while it is serving; a process whose growth is not
 * V8's pages (glibc's arenas) trims once and then waits for another `growthMb`.
 *
 * `CUADRA_IDLE_TRIM=0` turns it off; `CUADRA_IDLE_TRIM_MB` (default 32) and `CUADRA_IDLE_TRIM_MS`
 * (default 5000) tune it.
 */
export interface IdleTrim {
  /** Trims done so far: when, RSS before and after (bytes), how long the collection took (ms). */
  readonly trims: readonly { at: number; before: number; after: number; ms: number }[];
  /** Runs one check now (what the timer runs); answers whether it trimmed. */
  check(): boolean;
  stop(): void;
}

type Gc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

let gcFunction: Gc | null = null;
/**
 * V8's gc(): the one `--expose-gc` gives (every service is started with it: scripts/system.ts
 * SERVICE_NODE_OPTIONS, docker-compose's NODE_OPTIONS); for a process started without it (an
 * operator's own NODE_OPTIONS), the flag set at run time reaches a new context, as the probe does —
 * which Node documents as undefined behaviour, hence the start flag.
 */
function lastResortGc(): Gc {
  if (!gcFunction) {
    const exposed = (globalThis as { gc?: unknown }).gc;
    if (typeof exposed === 'function') gcFunction = exposed as Gc;
    else {
      v8.setFlagsFromString('--expose-gc');
      gcFunction = vm.runInNewContext('gc') as Gc;
    }
  }
  return gcFunction;
}

export function installIdleTrim(options: { growthMb?: number; intervalMs?: number; idleShare?: number; onTrim?: (t: { before: number; after: number; ms: number }) => void } = {}, env: NodeJS.ProcessEnv = process.env): IdleTrim | null {
  if (env.CUADRA_IDLE_TRIM === '0') return null;
  const growth = (options.growthMb ?? (Number(env.CUADRA_IDLE_TRIM_MB) || 32)) * 1048576;
  const intervalMs = options.intervalMs ?? (Number(env.CUADRA_IDLE_TRIM_MS) || 5000);
  const idleShare = options.idleShare ?? 0.1;
  const gc = lastResortGc();
  const trims: { at: number; before: number; after: number; ms: number }[] = [];
  let floor = process.memoryUsage.rss();
  let elu = performance.eventLoopUtilization();
  const check = (): boolean => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, elu).utilization;
    elu = now;
    const before = process.memoryUsage.rss();
    if (before < floor) floor = before;
    if (busy >= idleShare || before - floor < growth) return false;
    const t0 = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const ms = performance.now() - t0;
    const after = process.memoryUsage.rss();
    floor = after;
    // The collection itself is the loop's own work, not a caller's: the next interval starts after it.
    elu = performance.eventLoopUtilization();
    const t = { at: Date.now(), before, after, ms };
    trims.push(t);
    if (trims.length > 100) trims.shift();
    options.onTrim?.(t);
    return true;
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return { trims, check, stop: () => clearInterval(timer) };
}
