// `node bench/rollup-doc-write.ts` (issue 33): what one rollup write costs on the H2-backed store against the size of
// the document it lands in — a month rollup holding SIZES customers (default 100, 2000, 8000), each round an
// intent's `$inc` + `$addToSet` of its mark and the `$pull` of the mark after (books/rollup-intents.ts), the sizes
// alternated round by round so load affects each alike. Why per-party counters live in shards (books/rollup-store.ts).
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connectDatabase } from '../shared/src/db.ts';
import { repoRoot, startMongo, stopAll } from '../scripts/infra.ts';
import { pct } from './invoices-h2.ts';

const mongo = await startMongo({ backend: 'h2', file: path.join(repoRoot, 'test-output', 'bench', 'rollup-doc-write', 'h2.mv') });
const db = await connectDatabase(mongo.url, 'rollupw');
const col = db.collection<any>('rollups');
const sizes = (process.env.SIZES ?? '100,2000,8000').split(',').map(Number);
for (const k of sizes) {
  const c: Record<string, Record<string, number>> = {};
  const n: Record<string, string> = {};
  for (let i = 0; i < k; i++) {
    c[`pty_${i.toString(36).padStart(20, 'x')}`] = { invoiced: 1190000 * i, collected: 1000 * i, invoices: 3 };
    n[`pty_${i.toString(36).padStart(20, 'x')}`] = `andina caribe ${i} SAS`;
  }
  await col.insertOne({ _id: `m${k}`, v: { invoiced: 1 }, c, n, applied: [] });
}
const times: Record<number, number[]> = Object.fromEntries(sizes.map((k) => [k, []]));
for (let r = 0; r < 40; r++) {
  for (const k of sizes) {
    const t0 = performance.now();
    const mark = `evt_${r}`;
    await col.updateOne({ _id: `m${k}`, applied: { $ne: mark } }, { $inc: { 'v.invoiced': 5, [`c.pty_${(r % k).toString(36).padStart(20, 'x')}.invoiced`]: 5 }, $addToSet: { applied: mark } });
    await col.updateOne({ _id: `m${k}` }, { $pull: { applied: mark } } as never);
    times[k].push(performance.now() - t0);
  }
}
for (const k of sizes) console.log(`${k} customers in the document (${Math.round(JSON.stringify(await col.findOne({ _id: `m${k}` })).length / 1024)} KB): add + pull p50 ${pct(times[k], 50).toFixed(1)} ms p95 ${pct(times[k], 95).toFixed(1)} ms`);
await db.close();
await stopAll();
