// What the finance benches share: the invoices subgraph started on a fresh H2-backed
// MongoDB-protocol server (the embedded default's backend), and a seeded random source.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { buildMongoServerJar, ensureJavaAndMaven, repoRoot, startMongo } from '../scripts/infra.ts';
import { startTestSubgraph } from '../shared/src/testing.ts';
import { createServer, name } from '../subgraphs/invoices/src/server.ts';

/** The invoices subgraph on a fresh H2 file `test-output/bench/<label>-h2.mv`; `stopAll()` ends both. */
export async function startInvoicesOnH2(label: string) {
  await ensureJavaAndMaven();
  await buildMongoServerJar();
  const dataFile = path.join(repoRoot, 'test-output', 'bench', `${label}-h2.mv`);
  rmSync(dataFile, { force: true });
  const mongo = await startMongo({ backend: 'h2', file: dataFile, logFile: path.join(repoRoot, 'test-output', 'bench', `mongo-${label}.log`) });
  process.env.MONGO_URL = mongo.url;
  return startTestSubgraph(name, createServer);
}

/** Deterministic pseudo-random numbers, so every run seeds the same data. */
export function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
