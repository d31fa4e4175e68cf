// The store's scan detector (issue 33, scan14): with `reportScans` the launcher writes one line for every
// query it answers by walking a whole collection, and none for one an index answers — `_id` equality or
// `$in`, `_id` plus other fields (IdLookup), a unique index's keys. What the background-jobs test
// (background-scans.test.ts) and the audit in docs/measurements.md stand on.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readScanReport, startMongo, type RunningServer } from '../scripts/infra.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-scan-detector-'));
const report = path.join(dir, 'scans.jsonl');
let mongo: RunningServer;
let db: mongoose.Connection;

beforeAll(async () => {
  mongo = await startMongo({ backend: 'memory', reportScans: report, logFile: path.join(dir, 'mongo.log') });
  db = await mongoose.createConnection(`${mongo.url}/detector`).asPromise();
  const docs = db.collection<{ _id: string; workspace: string; status: string; n: number; key: string }>('docs');
  await docs.createIndex({ key: 1 }, { unique: true });
  await docs.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: `d${i}`, workspace: `w${i % 3}`, status: i % 2 ? 'open' : 'paid', n: i, key: `k${i}` })));
});

afterAll(async () => {
  await db?.close();
  await mongo?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The scans reported while `run` ran. */
async function scansOf(run: () => Promise<unknown>) {
  const before = readScanReport(report).length;
  await run();
  return readScanReport(report).slice(before);
}

describe('the scan detector', () => {
  it('reports nothing for what an index answers', async () => {
    const docs = db.collection('docs');
    const scans = await scansOf(async () => {
      await docs.findOne({ _id: 'd1' } as never);
      await docs.find({ _id: { $in: ['d1', 'd2'] } } as never).toArray();
      await docs.findOne({ _id: 'd3', workspace: 'w0' } as never);
      await docs.updateOne({ _id: 'd4', status: 'paid' } as never, { $set: { n: 40 } });
      await docs.findOne({ key: 'k5' });
    });
    expect(scans).toEqual([]);
  });

  it('reports a range, a non-unique field and an aggregate with the collection, the command, the shape and what it read', async () => {
    const docs = db.collection('docs');
    const scans = await scansOf(async () => {
      await docs.find({ workspace: 'w1', n: { $lt: 10 } }).sort({ n: -1 }).toArray();
      await docs.updateMany({ status: 'open' }, { $inc: { n: 1 } });
      await docs.aggregate([{ $match: { workspace: 'w2' } }, { $group: { _id: '$status', total: { $sum: '$n' } } }]).toArray();
    });
    expect(scans.map(({ t: _t, ...s }) => s)).toEqual([
      { db: 'detector', collection: 'docs', command: 'find', filter: { workspace: '?', n: { $lt: '?' } }, sort: { n: '?' }, examined: 30 },
      { db: 'detector', collection: 'docs', command: 'update', filter: { status: '?' }, examined: 30 },
      { db: 'detector', collection: 'docs', command: 'aggregate', filter: {}, pipeline: [{ $match: { workspace: '?' } }, { $group: { _id: '?', total: { $sum: '?' } } }], examined: 30 },
    ]);
  });
});
