// What an `_id` lookup with another field costs on the embedded H2 store (issue 21), and that its
// answers are right. Starts the launcher with `--backend h2` on a temporary file (BENCH_BACKEND=memory:
// the memory backend the tests and the other benches use, which has the same lookup), inserts 50,000
// documents into one collection and prints ms per operation (mean of BENCH_RUNS, default 200, random
// ids) for `{_id}`, `{_id, workspace}`, `findOneAndUpdate({_id})`, `findOneAndUpdate({_id, status})`,
// `{_id: {$in: 8}}`, `{_id: {$in: 8}, workspace}` and a ledger window — `{workspace, seq: {$in: 500}}` on a unique
// (workspace, seq) index over the same number of entries in two workspaces (issue 33) —, each with the launcher's
// CPU per operation (from /proc: what a busy store takes from the machine's other work, steadier than wall time
// on a loaded machine). Then checks that a second field still filters:
// `{_id, workspace: other}` finds nothing, a conditional update whose status does not match changes
// nothing, `$in` plus a range returns exactly the hand-computed subset in order. Exits 1 if a check fails.
// `node bench/h2-id-lookup.ts` (the current launcher, built if needed); `BENCH_JAR=<jar>` runs another
// build (e.g. an older one) for comparison; BENCH_DOCS sets the size.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import mongoose from 'mongoose';
import { buildMongoServerJar, ensureJavaAndMaven } from '../scripts/infra.ts';
import { processCpuUs } from './probe.ts';

const docs = Number(process.env.BENCH_DOCS ?? 50_000);
const runs = Number(process.env.BENCH_RUNS ?? 200);
await ensureJavaAndMaven();
const jar = process.env.BENCH_JAR ?? (await buildMongoServerJar());
const dir = mkdtempSync(path.join(os.tmpdir(), 'h2-id-lookup-'));
const backend = process.env.BENCH_BACKEND === 'memory' ? 'memory' : 'h2';
const child = spawn('java', ['-Xmx768m', '-jar', jar, '--backend', backend, ...(backend === 'h2' ? ['--file', path.join(dir, 'data.mv')] : []),
  '--host', '127.0.0.1', '--port', '0', '--exit-when-stdin-closes'], { stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`launcher exited (${code}) before listening`)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const m = /^LISTENING (\d+)$/.exec(line);
    if (m) resolve(Number(m[1]));
  });
});

const conn = await mongoose.createConnection(`mongodb://127.0.0.1:${port}`, { dbName: 'bench' }).asPromise();
const col = conn.db!.collection<{ _id: string; workspace: string; status: string; n: number; touched?: number }>('items');
const id = (n: number) => `itm_${String(n).padStart(6, '0')}`;
for (let done = 0; done < docs; done += 1000) {
  await col.insertMany(Array.from({ length: Math.min(1000, docs - done) }, (_, i) => {
    const n = done + i;
    return { _id: id(n), workspace: n % 2 === 0 ? 'ws_a' : 'ws_b', status: 'open', n };
  }));
}
const ws = (n: number) => (n % 2 === 0 ? 'ws_a' : 'ws_b');
const pick = () => Math.floor(Math.random() * docs);

async function time(label: string, op: (n: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 5; i++) await op(pick()); // warm-up
  const started = performance.now();
  const cpu = processCpuUs(child.pid!);
  for (let i = 0; i < runs; i++) await op(pick());
  console.log(`${label.padEnd(44)} ${((performance.now() - started) / runs).toFixed(2)} ms/op, launcher CPU ${((processCpuUs(child.pid!) - cpu) / 1000 / runs).toFixed(2)} ms/op`);
}

console.log(`${path.basename(jar)}, ${docs} documents, ${backend === 'h2' ? 'H2 (--commit sync)' : 'memory'}, mean of ${runs}`);
await time('findOne({_id})', (n) => col.findOne({ _id: id(n) }));
await time('findOne({_id, workspace})', (n) => col.findOne({ _id: id(n), workspace: ws(n) }));
await time('findOneAndUpdate({_id})', (n) => col.findOneAndUpdate({ _id: id(n) }, { $set: { touched: n } }));
await time('findOneAndUpdate({_id, status})', (n) =>
  col.findOneAndUpdate({ _id: id(n), status: 'open' }, { $set: { touched: n } }));
const eight = (n: number) => Array.from({ length: 8 }, (_, i) => id((n + i * 997) % docs));
await time('find({_id: {$in: 8}})', (n) => col.find({ _id: { $in: eight(n) } }).toArray());
await time('find({_id: {$in: 8}, workspace})', (n) => col.find({ _id: { $in: eight(n) }, workspace: 'ws_a' }).toArray());
// The two indexed-already reads once more, after the others: shows how much of a difference above is noise.
await time('find({_id: {$in: 8}}) again', (n) => col.find({ _id: { $in: eight(n) } }).toArray());
await time('findOne({_id}) again', (n) => col.findOne({ _id: id(n) }));
// The ledger's window read (shared/src/governance/ledger.ts positionsOf): 500 positions of one workspace, each looked up in the unique index.
const entries = conn.db!.collection<{ workspace: string; seq: number }>('entries');
await entries.createIndex({ workspace: 1, seq: 1 }, { unique: true });
for (let done = 0; done < docs; done += 1000) {
  await entries.insertMany(Array.from({ length: Math.min(1000, docs - done) }, (_, i) => ({ workspace: ws(done + i), seq: Math.floor((done + i) / 2) + 1 })));
}
const windowOf = (n: number) => Array.from({ length: 500 }, (_, i) => ((Math.floor(n / 2) + i) % Math.floor(docs / 2)) + 1);
await time('find({workspace, seq: {$in: 500}}) (a ledger window)', async (n) => {
  const rows = await entries.find({ workspace: 'ws_a', seq: { $in: windowOf(n) } }).toArray();
  if (rows.length !== 500) throw new Error(`a ledger window answered ${rows.length} entries, not 500`);
});

// Correctness: the other fields still filter.
const failures: string[] = [];
const check = (what: string, ok: boolean) => {
  if (!ok) failures.push(what);
};
check('{_id, workspace: own} finds it', (await col.findOne({ _id: id(10), workspace: 'ws_a' }))?.n === 10);
check('{_id, workspace: other} finds nothing', (await col.findOne({ _id: id(10), workspace: 'ws_b' })) === null);
check('{_id, workspace: other} counts 0', (await col.countDocuments({ _id: id(10), workspace: 'ws_b' })) === 0);
const none = await col.findOneAndUpdate({ _id: id(12), status: 'approved' }, { $set: { status: 'paid' } });
check('findOneAndUpdate({_id, status: not its status}) answers null', none === null);
const upd = await col.updateOne({ _id: id(12), status: 'approved' }, { $set: { status: 'paid' } });
check('updateOne({_id, status: not its status}) matches 0', upd.matchedCount === 0 && upd.modifiedCount === 0);
check('document 12 still open', (await col.findOne({ _id: id(12) }))?.status === 'open');
const moved = await col.findOneAndUpdate({ _id: id(12), status: 'open' }, { $set: { status: 'approved' } }, { returnDocument: 'after' });
check('findOneAndUpdate({_id, status: its status}) applies once', moved?.status === 'approved');
const again = await col.updateOne({ _id: id(12), status: 'open' }, { $set: { status: 'approved' } });
check('the same conditional update again matches 0', again.matchedCount === 0);
const del = await col.deleteOne({ _id: id(14), workspace: 'ws_b' });
check('deleteOne({_id, workspace: other}) deletes 0', del.deletedCount === 0 && (await col.findOne({ _id: id(14) })) !== null);
// $in over 20..29 plus n >= 24, workspace ws_a, newest first, skip 1, limit 2: ws_a among 24..29 is
// 24, 26, 28 → sorted desc 28, 26, 24 → skip 1 → 26, 24.
const ids = Array.from({ length: 10 }, (_, i) => id(20 + i));
const subset = await col.find({ _id: { $in: ids }, workspace: 'ws_a', n: { $gte: 24 } }).sort({ n: -1 }).skip(1).limit(2)
  .project({ n: 1, _id: 0 }).toArray();
check(`$in + workspace + range, sort/skip/limit/projection → [{n:26},{n:24}] (got ${JSON.stringify(subset)})`,
  JSON.stringify(subset) === JSON.stringify([{ n: 26 }, { n: 24 }]));
check('{_id: missing, workspace} finds nothing', (await col.findOne({ _id: 'itm_missing', workspace: 'ws_a' })) === null);

await conn.close();
child.stdin!.end();
await new Promise((resolve) => child.once('exit', resolve));
rmSync(dir, { recursive: true, force: true });
if (failures.length > 0) {
  console.log(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('correctness: all checks passed');
