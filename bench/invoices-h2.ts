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

/** The `p`th percentile of `values` (nearest rank). */
export function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A query-by-size table of the finance benches: `record` one cell, `print` the markdown table. */
export class SizeTable {
  readonly #rows: Record<string, Record<number, string>> = {};
  readonly #width: number;
  constructor(width: number) {
    this.#width = width;
  }

  /** Keeps `label` at `size`: p50 / p95 of `times` (ms), and prints the line. */
  record(label: string, size: number, times: number[]): void {
    (this.#rows[label] ??= {})[size] = `${pct(times, 50).toFixed(1)} / ${pct(times, 95).toFixed(1)}`;
    console.log(`  ${label.padEnd(this.#width)} p50 ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms`);
  }

  print(sizes: number[], noun: string): void {
    console.log(`\n| query (p50 / p95 ms) | ${sizes.map((n) => `${n.toLocaleString('en')} ${noun}`).join(' | ')} |`);
    console.log(`| --- | ${sizes.map(() => '---').join(' | ')} |`);
    for (const [label, row] of Object.entries(this.#rows)) console.log(`| ${label} | ${sizes.map((n) => row[n]).join(' | ')} |`);
  }
}
