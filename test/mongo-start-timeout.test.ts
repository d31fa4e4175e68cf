// startMongo's wait for the store to listen (issue 33, scale13): a store reopening a seed of gigabytes
// listened after 87–184 s, past the 60 s default, so bench/scale.ts's BENCH_KEEP / BENCH_REUSE pass a
// longer `startTimeoutMs`. The option is what the wait is: a wait shorter than a start fails in its terms
// (and kills the half-started server), the default still starts one.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMongo } from '../scripts/infra.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-mongo-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Processes whose command line names `file`. */
function processesWith(file: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(file);
    } catch {
      return false;
    }
  }).map(Number);
}

describe('startMongo startTimeoutMs', () => {
  it('gives up after the wait it is given, in its own terms, and leaves no server', async () => {
    const file = path.join(dir, 'short.mv');
    const err = await startMongo({ backend: 'h2', file, startTimeoutMs: 1 }).then(() => null, (e: Error) => e);
    expect(err?.message).toMatch(/no LISTENING line within 0\.001 s/);
    expect(processesWith(file)).toEqual([]);
  });

  it('starts with the default wait', async () => {
    const mongo = await startMongo({ backend: 'h2', file: path.join(dir, 'default.mv') });
    try {
      expect(mongo.url).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await mongo.stop();
    }
  });
});
