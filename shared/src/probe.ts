import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { trimsOfProcess } from './memory-trim.ts';

/**
 * The bench's probe (`bench/`), off unless `CUADRA_PROBE_DIR` is set: each SIGUSR2 closes one
 * measuring window and opens the next. A window's end writes `<dir>/<name>.<n>.json` with the
 * process's MongoDB commands (driver command monitoring), Redis commands and round trips
 * (ioredis calls and pipelines), CPU time and memory over the window; with
 * `CUADRA_PROBE_PROFILE=1` also `<dir>/<name>.<n>.cpuprofile` (V8's sampling profiler, in
 * process, so one profile per bench variant); with `CUADRA_PROBE_HEAP=<name>[,<name>…]` the named
 * services also write `<dir>/<name>.<n>.heapprofile`: V8's sampling heap profiler counting every
 * allocation of the window, collected or not (an allocation profile, not what stays live).
 * Production never sets the variable: nothing is wrapped, no listener is added.
 */
export function probeEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.CUADRA_PROBE_DIR);
}

interface Counts { mongo: Record<string, number>; redisCommands: Record<string, number>; redisRoundTrips: number }

export function installProbe(name: string, deps: { connections: Connection[]; redis: Redis[] }, env: NodeJS.ProcessEnv = process.env): void {
  const dir = env.CUADRA_PROBE_DIR;
  if (!dir) return;
  let counts: Counts = { mongo: {}, redisCommands: {}, redisRoundTrips: 0 };
  for (const connection of deps.connections) {
    connection.getClient().on('commandStarted', (e: { commandName: string; command: Record<string, unknown> }) => {
      const target = e.command[e.commandName];
      const key = typeof target === 'string' ? `${e.commandName} ${target}` : e.commandName;
      counts.mongo[key] = (counts.mongo[key] ?? 0) + 1;
    });
  }
  for (const redis of deps.redis) {
    const r = redis as unknown as { sendCommand(cmd: { name: string; inTransaction?: boolean; pipelineIndex?: number }, stream?: unknown): unknown; pipeline(...a: unknown[]): { exec(...a: unknown[]): unknown } };
    const send = r.sendCommand.bind(r);
    r.sendCommand = (cmd, stream) => {
      counts.redisCommands[cmd.name] = (counts.redisCommands[cmd.name] ?? 0) + 1;
      // A pipelined command travels with the others: one round trip per pipeline (counted at exec).
      if (cmd.pipelineIndex === undefined && !cmd.inTransaction) counts.redisRoundTrips++;
      return send(cmd, stream);
    };
    const pipeline = r.pipeline.bind(r);
    r.pipeline = (...a) => {
      const p = pipeline(...a);
      const exec = p.exec.bind(p);
      p.exec = (...b) => {
        counts.redisRoundTrips++;
        return exec(...b);
      };
      return p;
    };
  }
  const profile = env.CUADRA_PROBE_PROFILE === '1';
  // CUADRA_PROBE_GC=1 (the soak bench): a full collection before memory is read, so the heap
  // figure is what is live, not what garbage the collector has not reached yet.
  let collect: (() => void) | null = null;
  if (env.CUADRA_PROBE_GC === '1') {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as () => void;
  }
  const heap = (env.CUADRA_PROBE_HEAP ?? '').split(',').includes(name);
  const session = profile || heap ? new Session() : null;
  session?.connect();
  let window = 0;
  // The most heap V8 held in use (live and not yet collected) at any 200 ms tick of the window: an upper
  // bound of the live heap's peak, what a cap on the old space (--max-old-space-size) must stay above.
  let heapPeak = 0;
  setInterval(() => {
    const used = v8.getHeapStatistics().used_heap_size;
    if (used > heapPeak) heapPeak = used;
  }, 200).unref();
  let cpu = process.cpuUsage();
  let opened = performance.now();
  const startWindow = async () => {
    counts = { mongo: {}, redisCommands: {}, redisRoundTrips: 0 };
    heapPeak = 0;
    cpu = process.cpuUsage();
    opened = performance.now();
    if (heap && session) {
      // Objects the collector already took are kept in the profile: what a call allocates, not what it keeps.
      // CUADRA_PROBE_HEAP_MINOR=0 leaves out what scavenges took: what survived one — promoted, then taken
      // by a full collection (or still live) — the old space's garbage by where it was allocated (hop15).
      await session.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: env.CUADRA_PROBE_HEAP_MINOR !== '0' } as never);
    }
    if (profile && session) {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 500 });
      await session.post('Profiler.start');
    }
  };
  void startWindow();
  process.on('SIGUSR2', () => {
    void (async () => {
      const used = process.cpuUsage(cpu);
      const wall = performance.now() - opened;
      const n = window++;
      const closing = counts;
      const peak = Math.max(heapPeak, v8.getHeapStatistics().used_heap_size);
      collect?.();
      const mem = process.memoryUsage();
      // V8's young generation (both semi-spaces): committed to its maximum by a burst of allocation.
      const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
      if (heap && session) {
        const { profile: h } = await session.post('HeapProfiler.stopSampling');
        writeFileSync(path.join(dir, `${name}.${n}.heapprofile`), JSON.stringify(h));
      }
      if (profile && session) {
        const { profile: p } = await session.post('Profiler.stop');
        writeFileSync(path.join(dir, `${name}.${n}.cpuprofile`), JSON.stringify(p));
      }
      // Written aside and renamed: the bench polls for the file and must never read half of it.
      const file = path.join(dir, `${name}.${n}.json`);
      writeFileSync(`${file}.part`, JSON.stringify({
        name, pid: process.pid, window: n, wall_ms: wall, cpu_us: used.user + used.system, ...closing,
        memory: { rss: mem.rss, heapUsed: mem.heapUsed, heapTotal: mem.heapTotal, external: mem.external, arrayBuffers: mem.arrayBuffers, newSpace, heapPeak: peak, heapLimit: v8.getHeapStatistics().heap_size_limit },
        // The idle trim's last collections (memory-trim.ts): when, RSS before → after, busy or idle.
        trims: trimsOfProcess,
      }));
      renameSync(`${file}.part`, file);
      await startWindow();
    })();
  });
}
