// The idle trim (shared/src/memory-trim.ts, issue 33 "Memory"): a real Node process that raised its
// heap by a burst and let it go gives the pages back to the system once idle — and not while busy,
// nor when it has not grown.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const moduleUrl = new URL('../src/memory-trim.ts', import.meta.url).href;

/** Runs a child Node process (the same binary and the services' heap flags) and answers what it printed as JSON. */
async function child(script: string): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=16', '--max-old-space-size=1024', '--input-type=module', '-e', script], { cwd: path.dirname(new URL(import.meta.url).pathname), timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

const burst = `
const mb = () => Math.round(process.memoryUsage.rss() / 1048576);
const idle = (ms) => new Promise((r) => setTimeout(r, ms));
// A burst: ~100 MB of objects alive at once, then dropped (what a burst of reads leaves behind).
function raise() {
  let keep = [];
  for (let i = 0; i < 400_000; i++) keep.push({ id: 'x' + i, name: 'party ' + i, value: i * 3, tags: [i] });
  return keep.length;
}
`;

describe('installIdleTrim', () => {
  it('gives back the heap pages a burst left once the process is idle, and only then', async () => {
    const out = await child(`${burst}
      const { installIdleTrim } = await import(${JSON.stringify(moduleUrl)});
      // Inside the event loop, as a service's work is (its utilisation is not counted before the loop runs).
      await idle(100);
      // The busy bound out of reach here: this test is the idle rule's (the busy one is the next test's).
      const trim = installIdleTrim({ intervalMs: 3_600_000, growthMb: 32, busyGrowthMb: 100_000 }, {});
      const start = mb();
      const grownNothing = trim.check();
      raise();
      const busyCheck = trim.check();        // right after the burst: the loop was busy (and under the busy bound)
      // Idle and grown: trims. Each check measures the loop since the last one; on a loaded machine the
      // collector's own work after the burst can keep one window over the idle share, so a few are allowed.
      let before = 0;
      let trimmed = false;
      let windows = 0;
      while (!trimmed && windows < 20) {
        await idle(500);
        windows++;
        before = mb();
        trimmed = trim.check();
      }
      const after = mb();
      await idle(1500);
      const again = trim.check();             // idle, but not grown since the trim
      trim.stop();
      console.log(JSON.stringify({ start, grownNothing, busyCheck, before, trimmed, windows, after, again, ms: trim.trims[0]?.ms }));
    `);
    expect(out.grownNothing).toBe(false);
    expect(out.busyCheck).toBe(false);
    expect(out.trimmed).toBe(true);
    expect(out.again).toBe(false);
    // The burst's pages were resident after the collector had freed them, and the trim gave most of them back.
    expect(out.before as number).toBeGreaterThan((out.start as number) + 60);
    expect((out.before as number) - (out.after as number)).toBeGreaterThan(50);
  });

  it('trims a process its background work keeps busy, once it grew by the busy bound, and not again within busyEveryMs (mem13)', async () => {
    const out = await child(`${burst}
      const { installIdleTrim } = await import(${JSON.stringify(moduleUrl)});
      await idle(100);
      // Background work with no caller: ~40 % of the loop (what the invoices service's overdue sweep did after a bulk load).
      let sink = 0;
      const work = setInterval(() => { const t = performance.now(); while (performance.now() - t < 4) sink += JSON.stringify({ a: Math.random() }).length; }, 10);
      const trim = installIdleTrim({ intervalMs: 3_600_000, growthMb: 32, busyGrowthMb: 48, busyEveryMs: 60_000 }, {});
      await idle(500);
      const start = mb();
      const grownNothing = trim.check();
      raise();
      await idle(1000);
      const before = mb();
      const trimmed = trim.check();
      const after = mb();
      raise();
      await idle(1000);
      const grownAgain = mb() - after;
      const again = trim.check();             // grown past the bound again, but within busyEveryMs of the last trim
      clearInterval(work);
      trim.stop();
      console.log(JSON.stringify({ start, grownNothing, before, trimmed, after, grownAgain, again, busy: trim.trims[0]?.busy, sink: sink > 0 }));
    `);
    expect(out.grownNothing).toBe(false);
    expect(out.before as number).toBeGreaterThan((out.start as number) + 60);
    expect(out.trimmed).toBe(true);
    expect(out.busy).toBe(true);
    expect((out.before as number) - (out.after as number)).toBeGreaterThan(40);
    expect(out.grownAgain as number).toBeGreaterThan(48);
    expect(out.again).toBe(false);
  });

  it('a regular full collection does not give those pages back (why the trim asks for the last-resort one)', async () => {
    const out = await child(`${burst}
      const v8 = (await import('node:v8')).default;
      const vm = (await import('node:vm')).default;
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc');
      const start = mb();
      raise();
      gc();
      await idle(1500);
      gc();
      const afterRegular = mb();
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      const afterLastResort = mb();
      console.log(JSON.stringify({ start, afterRegular, afterLastResort, heap: Math.round(process.memoryUsage().heapTotal / 1048576) }));
    `);
    expect(out.afterRegular as number).toBeGreaterThan((out.start as number) + 60);
    expect((out.afterRegular as number) - (out.afterLastResort as number)).toBeGreaterThan(50);
  });

  it('is off with CUADRA_IDLE_TRIM=0', async () => {
    const { installIdleTrim } = await import('../src/memory-trim.ts');
    expect(installIdleTrim({}, { CUADRA_IDLE_TRIM: '0' })).toBeNull();
  });

  it('refuses a setting that is negative, zero, not a number or out of range, naming it (before: taken silently, a negative growth trimming at every check)', async () => {
    const { idleTrimSettings, installIdleTrim } = await import('../src/memory-trim.ts');
    const refused: [Record<string, string>, RegExp][] = [
      [{ CUADRA_IDLE_TRIM_MB: '-5' }, /^CUADRA_IDLE_TRIM_MB is "-5": it takes a whole number of MB from 1 to 65536/],
      [{ CUADRA_IDLE_TRIM_BUSY_MB: '0' }, /^CUADRA_IDLE_TRIM_BUSY_MB is "0"/],
      [{ CUADRA_IDLE_TRIM_MS: '-1' }, /^CUADRA_IDLE_TRIM_MS is "-1": it takes a whole number of ms from 100 to 3600000/],
      [{ CUADRA_IDLE_TRIM_MS: '5s' }, /^CUADRA_IDLE_TRIM_MS is "5s"/],
      [{ CUADRA_IDLE_TRIM_MB: '1e9' }, /^CUADRA_IDLE_TRIM_MB is "1e9"/],
      [{ CUADRA_IDLE_TRIM_MB: '2.5' }, /^CUADRA_IDLE_TRIM_MB is "2.5"/],
      [{ CUADRA_IDLE_TRIM: 'yes' }, /^CUADRA_IDLE_TRIM is "yes": it takes 0 \(off\) or 1/],
    ];
    for (const [env, message] of refused) {
      expect(() => idleTrimSettings(env), JSON.stringify(env)).toThrow(message);
      expect(() => installIdleTrim({}, env), JSON.stringify(env)).toThrow(message);
    }
    expect(idleTrimSettings({})).toEqual({ enabled: true, growthMb: 32, busyGrowthMb: 48, intervalMs: 5_000 });
    expect(idleTrimSettings({ CUADRA_IDLE_TRIM: '1', CUADRA_IDLE_TRIM_MB: ' 64 ', CUADRA_IDLE_TRIM_BUSY_MB: '', CUADRA_IDLE_TRIM_MS: '100' })).toEqual({ enabled: true, growthMb: 64, busyGrowthMb: 48, intervalMs: 100 });
  });

  it('stops a service at start with the sentence, before it connects anything (the gateway, run as its container runs it)', async () => {
    const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
    const run = promisify(execFile)(process.execPath, ['gateway/src/index.ts'], {
      cwd: root,
      timeout: 60_000,
      // A database nobody listens on: the refusal must come before any connection is tried.
      env: { ...process.env, MONGO_URL: 'mongodb://127.0.0.1:9', CUADRA_SIGNING_KEY: 'unused', CUADRA_IDLE_TRIM_MB: '-5', LOG_LEVEL: 'info' },
    });
    const failed = await run.then(() => null, (err: { code?: number; stdout?: string; stderr?: string }) => err);
    expect(failed?.code).toBe(1);
    expect(`${failed?.stdout}${failed?.stderr}`).toContain('CUADRA_IDLE_TRIM_MB is \\"-5\\"');
  }, 60_000);
});
