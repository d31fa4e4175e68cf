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
 * collection per `growthMb` of growth; a process whose growth is not V8's pages (glibc's arenas)
 * trims once and then waits for another `growthMb`.
 *
 * A process that is never idle trims too, once its RSS is `busyGrowthMb` above that floor, at most
 * once per `busyEveryMs` (mem13). After a bulk load the invoices service's sweep notes every
 * invoice and bill already past due (modules/invoices/overdue.ts; 7,143 events at 50,000 invoices,
 * 10–20 a second, the process at 10–17 % of a core with no caller waiting): in scale12's 100,000
 * runs the reads began beside it, and invoices grew +56 / +90 MB, still allocating in the rest after
 * them, and gave none of it back, for no interval was idle. The price of a busy trim is one pause of the collection (~110 ms with a
 * 100 MB live heap, mem12) for whatever runs then, at most once per `busyEveryMs` and only after
 * that much growth — against growth that otherwise stays for as long as the work does.
 *
 * `CUADRA_IDLE_TRIM=0` turns it off; `CUADRA_IDLE_TRIM_MB` (default 32), `CUADRA_IDLE_TRIM_BUSY_MB`
 * (default 48) and `CUADRA_IDLE_TRIM_MS` (default 5000) tune it. A setting out of its range or not a
 * number is refused at start ({@link idleTrimSettings}), never taken silently: a negative growth
 * made every check a full collection, a negative interval ran the check every millisecond.
 */
export interface IdleTrim {
  /** Trims done so far: when, RSS before and after (bytes), how long the collection took (ms), whether the loop was busy. */
  readonly trims: readonly Trim[];
  /** Runs one check now (what the timer runs); answers whether it trimmed. */
  check(): boolean;
  stop(): void;
}

export interface Trim { at: number; before: number; after: number; ms: number; busy: boolean }

/** Every trim of this process (the last 100): the bench's probe reports them (shared/src/probe.ts). */
export const trimsOfProcess: Trim[] = [];

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

/** Each setting's range (inclusive) and default. */
const SETTINGS = {
  CUADRA_IDLE_TRIM_MB: { min: 1, max: 65_536, unit: 'MB', fallback: 32 },
  CUADRA_IDLE_TRIM_BUSY_MB: { min: 1, max: 65_536, unit: 'MB', fallback: 48 },
  CUADRA_IDLE_TRIM_MS: { min: 100, max: 3_600_000, unit: 'ms', fallback: 5_000 },
} as const;

/**
 * The trim's settings from the environment, each checked: unset or empty takes its default; a value
 * that is not a whole number in its range (or `CUADRA_IDLE_TRIM` other than `0`/`1`) throws, naming
 * the variable, what it was and what it takes. Every service calls it before connecting anything
 * (gateway/src/index.ts, shared/src/main.ts), so a wrong setting stops the start with that sentence.
 */
export function idleTrimSettings(env: NodeJS.ProcessEnv = process.env): { enabled: boolean; growthMb: number; busyGrowthMb: number; intervalMs: number } {
  const enabled = env.CUADRA_IDLE_TRIM;
  if (enabled !== undefined && enabled !== '' && enabled !== '0' && enabled !== '1') {
    throw new Error(`CUADRA_IDLE_TRIM is ${JSON.stringify(enabled)}: it takes 0 (off) or 1 (on, the default).`);
  }
  const read = (name: keyof typeof SETTINGS): number => {
    const { min, max, unit, fallback } = SETTINGS[name];
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      throw new Error(`${name} is ${JSON.stringify(env[name])}: it takes a whole number of ${unit} from ${min} to ${max} (default ${fallback}).`);
    }
    return value;
  };
  return { enabled: enabled !== '0', growthMb: read('CUADRA_IDLE_TRIM_MB'), busyGrowthMb: read('CUADRA_IDLE_TRIM_BUSY_MB'), intervalMs: read('CUADRA_IDLE_TRIM_MS') };
}

export function installIdleTrim(options: { growthMb?: number; busyGrowthMb?: number; busyEveryMs?: number; intervalMs?: number; idleShare?: number; onTrim?: (t: Trim) => void } = {}, env: NodeJS.ProcessEnv = process.env): IdleTrim | null {
  const settings = idleTrimSettings(env);
  if (!settings.enabled) return null;
  const growth = (options.growthMb ?? settings.growthMb) * 1048576;
  const busyGrowth = (options.busyGrowthMb ?? settings.busyGrowthMb) * 1048576;
  const busyEveryMs = options.busyEveryMs ?? 30_000;
  const intervalMs = options.intervalMs ?? settings.intervalMs;
  const idleShare = options.idleShare ?? 0.1;
  const gc = lastResortGc();
  const trims: Trim[] = [];
  let floor = process.memoryUsage.rss();
  let lastTrim = 0;
  let elu = performance.eventLoopUtilization();
  const check = (): boolean => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, elu).utilization >= idleShare;
    elu = now;
    const before = process.memoryUsage.rss();
    if (before < floor) floor = before;
    const due = busy ? before - floor >= busyGrowth && Date.now() - lastTrim >= busyEveryMs : before - floor >= growth;
    if (!due) return false;
    const t0 = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const ms = performance.now() - t0;
    const after = process.memoryUsage.rss();
    floor = after;
    lastTrim = Date.now();
    // The collection itself is the loop's own work, not a caller's: the next interval starts after it.
    elu = performance.eventLoopUtilization();
    const t = { at: lastTrim, before, after, ms, busy };
    for (const list of [trims, trimsOfProcess]) {
      list.push(t);
      if (list.length > 100) list.shift();
    }
    options.onTrim?.(t);
    return true;
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return { trims, check, stop: () => clearInterval(timer) };
}
