// What durable acknowledgements cost on the embedded store: the same burst of single-document
// inserts (16 at a time) against two H2-backed mongo-java-servers side by side in one run, one
// committing and syncing before each answer (`--commit sync`, the default) and one on
// mongo-java-server's own once-a-second timer (`--commit timer`). `node bench/commit-policy.ts [n]`.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { buildMongoServerJar, startMongo, stopAll } from '../scripts/infra.ts';

const n = Number(process.argv[2] ?? 3000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-commit-'));

async function burst(url: string, round: number): Promise<{ perSecond: number; p50: number; p99: number }> {
  const conn = await mongoose.createConnection(url, { dbName: `bench${round}` }).asPromise();
  const col = conn.db!.collection<{ _id: string; i: number; pad: string }>('docs');
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = next++; i < n; i = next++) {
      const s = performance.now();
      await col.insertOne({ _id: `d${i}`, i, pad: 'x'.repeat(200) });
      latencies.push(performance.now() - s);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  await conn.close();
  latencies.sort((a, b) => a - b);
  return { perSecond: Math.round(n / seconds), p50: +latencies[Math.floor(n * 0.5)].toFixed(2), p99: +latencies[Math.floor(n * 0.99)].toFixed(2) };
}

try {
  await buildMongoServerJar();
  const sync = await startMongo({ backend: 'h2', file: path.join(dir, 'sync.mv'), commit: 'sync' });
  const timer = await startMongo({ backend: 'h2', file: path.join(dir, 'timer.mv'), commit: 'timer' });
  // Alternate, so both see the same machine: timer, sync, timer, sync.
  const rows: Record<string, { perSecond: number; p50: number; p99: number }[]> = { timer: [], sync: [] };
  for (let round = 0; round < 2; round++) {
    rows.timer.push(await burst(timer.url, round));
    rows.sync.push(await burst(sync.url, round));
  }
  for (const [name, list] of Object.entries(rows)) console.log(`${name.padEnd(6)} ${list.map((r) => `${r.perSecond} writes/s p50 ${r.p50} ms p99 ${r.p99} ms`).join(' | ')}`);
  const ratio = rows.sync.reduce((a, r) => a + r.perSecond, 0) / rows.timer.reduce((a, r) => a + r.perSecond, 0);
  console.log(`sync/timer throughput ${ratio.toFixed(2)}× (${n} inserts a burst, 16 at a time)`);
} finally {
  await stopAll();
}
