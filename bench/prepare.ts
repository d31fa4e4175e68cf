import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from '../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot } from '../scripts/infra.ts';

/**
 * What a bench that starts a whole system does first: the servers it needs installed, the supergraph
 * composed, the launcher's jar built; then its output folder (`test-output/<out>`) with the sub-folder
 * `fresh` emptied for this run's files (probe readings, dumps, snapshots).
 */
export async function prepareBench(out: string, fresh: string): Promise<{ outDir: string; freshDir: string }> {
  await ensureJavaAndMaven();
  await ensureRedisServer();
  await build();
  await buildMongoServerJar();
  const outDir = path.join(repoRoot, 'test-output', out);
  const freshDir = path.join(outDir, fresh);
  rmSync(freshDir, { recursive: true, force: true });
  mkdirSync(freshDir, { recursive: true });
  return { outDir, freshDir };
}
