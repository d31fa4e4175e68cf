// `node bench/verify.ts`: what `ledger.verify` costs as a workspace's ledger grows. Seeds
// workspaces of 1,000 and 100,000 entries through the Ledger class itself (group-committed,
// signed appends, checkpoints and the Redis head, exactly as services write them), then times
// the routine verify (from the newest signed checkpoint) at several tails (entries appended since
// the newest checkpoint: 0, half a checkpoint interval, one short of it) with the store commands it
// sends, the same with 10 receipts, and the full walk. Also times appends with and without the
// anchor key (the cost of receipts).
// BENCH_SIZES=1000,100000 chooses sizes; BENCH_RUNS (default 7) timed routine runs per size and
// tail (the full walk runs 3 times; BENCH_FULL=0 skips it). BENCH_LOCK (a lock file, e.g.
// /tmp/cuadra-cpu.lock): the seed runs without it, the timed phase holds it (flock). The
// MongoDB-protocol server runs its H2 backend, as `npm start` does.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { buildMongoServerJar, ensureJavaAndMaven, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { connectDatabase } from '../shared/src/db.ts';
import { LedgerSigner } from '../shared/src/governance/anchor.ts';
import { CHECKPOINT_EVERY, Ledger, type AppendedEntry } from '../shared/src/governance/ledger.ts';
import type { Principal } from '../shared/src/principal.ts';

const sizes = (process.env.BENCH_SIZES ?? '1000,100000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 7);
const withFull = process.env.BENCH_FULL !== '0';
const out = path.join(repoRoot, 'test-output', 'bench');

await ensureJavaAndMaven();
await buildMongoServerJar();
const dataFile = path.join(out, 'verify-h2.mv');
rmSync(dataFile, { force: true });
const mongo = await startMongo({ backend: 'h2', file: dataFile, logFile: path.join(out, 'mongo-verify.log') });
const redisServer = await startRedis({ dir: path.join(out, 'redis-verify') });
const db = await connectDatabase(mongo.url, 'bench_verify');
// The same database through a connection that reports every command it sends (counted apart from the timed runs).
const watched = await connectDatabase(mongo.url, 'bench_verify', { monitorCommands: true });
const redis = new Redis(redisServer.url);
const { privateKey } = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
const ledger = new Ledger(db, redis, { signer: new LedgerSigner({ privateKey }), redisPrefix: 'bench' });
const unsigned = new Ledger(db, redis, { signer: null, redisPrefix: 'bench' });
const counting = new Ledger(watched, redis, { signer: new LedgerSigner({ privateKey }), redisPrefix: 'bench' });
await ledger.init();

const principal = (workspace: string): Principal => ({ workspace, role: 'owner', actor: { type: 'api_key', id: 'key_b' }, credential_id: 'key_b', scopes: null, patterns: null });

/** Appends `n` entries, 2,000 in flight at a time (the ledger batches them 200 per write). */
async function seed(l: Ledger, workspace: string, n: number): Promise<AppendedEntry[]> {
  const all: AppendedEntry[] = [];
  for (let done = 0; done < n; done += 2000) {
    const chunk = Math.min(2000, n - done);
    all.push(...(await Promise.all(Array.from({ length: chunk }, (_, i) =>
      l.append({ principal: principal(workspace), tool: 'invoices.create', risk: 'write', input_digest: String(done + i).padStart(64, '0'), outcome: 'ok', duration_ms: 3 })))));
  }
  return all;
}

/**
 * The commands one call sends to the store, by command and collection, and how many of the
 * ledger's positions its finds on `ledger` ask for: a `seq` given as a value is one, a `$in` its
 * length, anything else (a range, no `seq`) counts as a walk of the collection (∞).
 */
async function commandsOf(connection: Connection, call: () => Promise<unknown>): Promise<{ commands: Record<string, number>; positions: number }> {
  const commands: Record<string, number> = {};
  let positions = 0;
  const listen = (e: { commandName: string; command: Record<string, any> }) => {
    const target = e.command[e.commandName];
    const key = `${e.commandName} ${typeof target === 'string' ? target : ''}`.trim();
    commands[key] = (commands[key] ?? 0) + 1;
    if (e.commandName === 'find' && target === 'ledger') {
      const seq = e.command.filter?.seq;
      positions += typeof seq === 'number' ? 1 : Array.isArray(seq?.$in) ? seq.$in.length : Number.POSITIVE_INFINITY;
    }
  };
  connection.getClient().on('commandStarted', listen);
  try {
    await call();
  } finally {
    connection.getClient().off('commandStarted', listen);
  }
  return { commands, positions };
}

async function holdLock(file: string | undefined): Promise<{ release(): void }> {
  if (!file) return { release() {} };
  const t0 = performance.now();
  const child = spawn('flock', [file, 'sh', '-c', 'echo locked; read _'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await once(child.stdout!, 'data');
  console.log(`(waited ${((performance.now() - t0) / 1000).toFixed(0)} s for ${file}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  return { release: () => child.stdin!.end() };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

let lock = { release() {} };
try {
  // The seed, without the lock.
  const seeded: { n: number; ws: string; receipts: string[] }[] = [];
  await seed(ledger, `ws_warm_${randomBytes(3).toString('hex')}`, 1000);
  for (const n of sizes) {
    const ws = `ws_verify_${n}_${randomBytes(3).toString('hex')}`;
    const t0 = performance.now();
    const entries = await seed(ledger, ws, n);
    console.log(`seeded ${n.toLocaleString('en')} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    seeded.push({ n, ws, receipts: Array.from({ length: 10 }, (_, i) => entries[Math.floor((i * (n - 1)) / 9)].receipt!) });
  }

  lock = await holdLock(process.env.BENCH_LOCK);
  // The cost of receipts on the write path: the same appends with and without signing, in
  // alternating rounds (the machine is shared; the collection grows as rounds go on).
  const appendTimes: Record<string, number[]> = { unsigned: [], signed: [] };
  for (let round = 0; round < 3; round++) {
    for (const [label, l] of [['unsigned', unsigned], ['signed', ledger]] as const) {
      const t = performance.now();
      await seed(l, `ws_append_${label}_${randomBytes(3).toString('hex')}`, 2000);
      appendTimes[label].push(((performance.now() - t) * 1000) / 2000);
    }
  }
  for (const [label, xs] of Object.entries(appendTimes)) console.log(`append, ${label.padEnd(8)}: ${xs.map((x) => x.toFixed(0)).join(', ')} µs an entry (3 rounds of 2,000)`);
  // The signature alone, on this machine.
  const signer = new LedgerSigner({ privateKey });
  const ts = performance.now();
  for (let i = 0; i < 2000; i++) signer.sign('ws_x', i + 1, 'a'.repeat(64));
  console.log(`Ed25519 sign: ${(((performance.now() - ts) * 1000) / 2000).toFixed(0)} µs`);

  const rows: string[] = [];
  const time = async (n: number, count: number, run: () => Promise<{ ok: boolean }>) => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const t = performance.now();
      const v = await run();
      times.push(performance.now() - t);
      if (!v.ok) throw new Error(`verify failed at ${n}: ${JSON.stringify(v)}`);
    }
    return times;
  };
  // At a checkpoint (nothing appended since), half an interval past it, and one short of the next (the most a routine walk reads).
  for (const tail of [0, CHECKPOINT_EVERY / 2, CHECKPOINT_EVERY - 1]) {
    for (const { n, ws, receipts } of seeded) {
      const now = (await ledger.verify(ws)).entries;
      if (now % CHECKPOINT_EVERY < tail) await seed(ledger, ws, tail - (now % CHECKPOINT_EVERY));
      await ledger.verify(ws); // a warm-up
      const routine = await time(n, runs, () => ledger.verify(ws));
      const withReceipts = await time(n, runs, () => ledger.verify(ws, { receipts }));
      // The whole walk: every page (shared/src/governance/ledger.ts FULL_WALK_PAGE), cursor after cursor.
      const full = withFull && tail === 0 ? await time(n, 3, async () => {
        let v = await ledger.verify(ws, { full: true });
        while (v.ok && v.next_cursor) v = await ledger.verify(ws, { full: true, cursor: v.next_cursor });
        return v;
      }) : null;
      let r = await ledger.verify(ws);
      const { commands, positions } = await commandsOf(watched, async () => { r = await counting.verify(ws); });
      const sent = Object.entries(commands).sort().map(([k, v]) => `${k} ${v}`).join(', ');
      const line = `| ${r.entries.toLocaleString('en')} | ${r.entries - r.checked_from!} | ${pct(routine, 50).toFixed(1)} / ${pct(routine, 95).toFixed(1)} | ${positions} | ${sent} | ${pct(withReceipts, 50).toFixed(1)} | ${full ? pct(full, 50).toFixed(0) : '–'} |`;
      console.log(line);
      rows.push(line);
    }
  }
  console.log(`\n(load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  console.log('\n| entries | routine walks | routine p50 / p95 ms | ledger positions asked | store commands of one routine verify | routine + 10 receipts p50 ms | full walk p50 ms |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
} finally {
  lock.release();
  await Promise.all([db.close(), watched.close()]);
  redis.disconnect();
  await stopAll();
}
