// Run stamps (issue 31, finding 6) against a real MongoDB-protocol server: every write a handler
// makes in its service's database carries its run in the same document, through models and through
// `model.collection` alike; a delete marks the intent first; nothing outside a run, nothing in
// bookkeeping collections, nothing on another connection is stamped; the stamps never reach an answer.
import { randomBytes } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, modelOn } from '../src/db.ts';
import { declareDerivedCollection, findRunStamps, RUNS_KEPT, runScope, stampRunsOn, withoutRunStamps } from '../src/governance/runs.ts';

const dbName = `test_runs_${randomBytes(4).toString('hex')}`;
let owner: Connection;
let other: Connection;

beforeAll(async () => {
  owner = await connectDatabase(process.env.MONGO_URL!, dbName);
  other = await connectDatabase(process.env.MONGO_URL!, `${dbName}_other`);
  stampRunsOn(owner);
});
afterAll(async () => {
  await owner.dropDatabase().catch(() => undefined);
  await other.dropDatabase().catch(() => undefined);
  await Promise.all([owner.close(), other.close()]);
});

interface ThingDoc { _id: string; n: number; name?: string }
const thingSchema = new Schema<ThingDoc>({ _id: String, n: Number, name: String }, { versionKey: false });
const things = (db: Connection) => modelOn<ThingDoc>(db, 'Thing', thingSchema, 'things');

/** Runs `fn` as the handler of run `run`; `marks` counts the intent marks made before deletes. */
function inRun<T>(run: string, fn: () => Promise<T>, marks: string[] = []): Promise<T> {
  return runScope.run({ run, markDeletes: async () => { await new Promise((r) => setTimeout(r, 20)); marks.push(run); } }, fn);
}

const raw = (id: string) => owner.db!.collection('things').findOne({ _id: id as never });

describe('run stamps', () => {
  it('stamps inserts, updates and replacements made through a model or its collection, in the same write', async () => {
    const M = things(owner);
    await inRun('int_a', async () => {
      await M.create({ _id: 'a1', n: 1 });
      await M.collection.insertMany([{ _id: 'a2', n: 2 }, { _id: 'a3', n: 3 }] as never[]);
      await M.bulkWrite([{ insertOne: { document: { _id: 'a4', n: 4 } } }]);
    });
    for (const id of ['a1', 'a2', 'a3', 'a4']) expect([id, (await raw(id))!._runs]).toEqual([id, ['int_a']]);
    await inRun('int_b', async () => {
      await M.updateOne({ _id: 'a1' }, { $inc: { n: 1 } });
      await M.findOneAndUpdate({ _id: 'a2' }, { $set: { name: 'two' } });
      await M.collection.updateMany({ _id: { $in: ['a3'] } } as never, { $set: { name: 'three' } });
      await M.replaceOne({ _id: 'a4' }, { n: 40 });
    });
    expect(await raw('a1')).toMatchObject({ n: 2, _runs: ['int_a', 'int_b'] });
    expect(await raw('a2')).toMatchObject({ name: 'two', _runs: ['int_a', 'int_b'] });
    expect(await raw('a3')).toMatchObject({ name: 'three', _runs: ['int_a', 'int_b'] });
    expect((await raw('a4'))!._runs).toContain('int_b');
    expect((await findRunStamps(owner, 'int_b')).map((s) => [s.collection, s.ids.length])).toEqual([['things', 2]]);
    expect(await findRunStamps(owner, 'int_never')).toEqual([]);
  });

  it('keeps the newest stamps of a document that is written often', async () => {
    const M = things(owner);
    await inRun('int_c0', () => M.create({ _id: 'c', n: 0 }));
    for (let i = 1; i <= RUNS_KEPT + 4; i++) await inRun(`int_c${i}`, async () => M.updateOne({ _id: 'c' }, { $inc: { n: 1 } }));
    const runs = (await raw('c'))!._runs as string[];
    expect(runs).toHaveLength(RUNS_KEPT);
    expect(runs.at(-1)).toBe(`int_c${RUNS_KEPT + 4}`);
    expect(runs[0]).toBe('int_c5');
  });

  it('marks the intent, and waits for the mark, before a run deletes anything', async () => {
    const M = things(owner);
    await M.create({ _id: 'd1', n: 1 });
    await M.create({ _id: 'd2', n: 2 });
    const marks: string[] = [];
    const order: string[] = [];
    await inRun('int_d', async () => {
      const deleting = M.deleteOne({ _id: 'd1' }).then(() => order.push(`deleted after ${marks.length} mark(s)`));
      await deleting;
      await M.collection.deleteMany({ _id: 'd2' } as never);
    }, marks);
    expect(marks).toEqual(['int_d']); // once per run
    expect(order).toEqual(['deleted after 1 mark(s)']);
    expect(await raw('d1')).toBeNull();
    expect(await raw('d2')).toBeNull();
  });

  it('stamps nothing outside a run, in a bookkeeping collection, or on a connection not given', async () => {
    await things(owner).create({ _id: 'e1', n: 1 });
    expect((await raw('e1'))!._runs).toBeUndefined();
    declareDerivedCollection('things_counters');
    await inRun('int_e', async () => {
      await owner.collection('things_counters').updateOne({ _id: 'x' } as never, { $inc: { n: 1 } }, { upsert: true });
      await things(other).create({ _id: 'e2', n: 2 });
    });
    expect((await owner.db!.collection('things_counters').findOne({ _id: 'x' as never }))!._runs).toBeUndefined();
    expect((await other.db!.collection('things').findOne({ _id: 'e2' as never }))!._runs).toBeUndefined();
    expect(await findRunStamps(owner, 'int_e')).toEqual([]);
  });

  it('a new document carries only its own run, not the stamps of the document it was copied from', async () => {
    const M = things(owner);
    await inRun('int_f0', () => M.create({ _id: 'f1', n: 1 }));
    const copy = { ...(await M.findById('f1').lean())!, _id: 'f2' };
    await inRun('int_f1', () => M.collection.insertOne(copy as never));
    expect((await raw('f2'))!._runs).toEqual(['int_f1']);
  });

  it('never answers the stamps: they are taken out of an output at any depth', () => {
    const at = new Date('2026-11-27T00:00:00Z');
    const out = withoutRunStamps({ party: { id: 'p', _runs: ['int_x'], at }, rows: [{ _runs: ['int_y'], n: 1 }] });
    expect(out).toEqual({ party: { id: 'p', at }, rows: [{ n: 1 }] });
  });
});

describe('run stamps on a document written back whole', () => {
  it('an update that $sets the stored stamps it read carries them with this run, without a conflicting $push', async () => {
    const M = things(owner);
    await inRun('int_g0', () => M.create({ _id: 'g', n: 0 }));
    const read = (await M.collection.findOne({ _id: 'g' } as never))!;
    await inRun('int_g1', async () => M.collection.updateOne({ _id: 'g' } as never, { $set: { ...read, n: 1 } }));
    expect(await raw('g')).toMatchObject({ n: 1, _runs: ['int_g0', 'int_g1'] });
    await inRun('int_g2', async () => M.collection.findOneAndUpdate({ _id: 'g' } as never, { $set: { n: 2 }, $unset: { '_runs.0': '' } }));
    expect(await raw('g')).toMatchObject({ n: 2, _runs: ['int_g0', 'int_g1', 'int_g2'] });
  });
});

describe('run stamps on a shared database', () => {
  it('stamps only the collections named for it (the governance records a handler may write), and finds stamps only there', async () => {
    stampRunsOn(other, { only: ['policies'] }); // (the other tests ran before: `other` was not stamped until now)
    await inRun('int_h', async () => {
      await other.collection('policies').insertOne({ _id: 'h1' } as never);
      await other.collection('ledger').insertOne({ _id: 'h2' } as never);
    });
    expect((await other.db!.collection('policies').findOne({ _id: 'h1' as never }))!._runs).toEqual(['int_h']);
    expect((await other.db!.collection('ledger').findOne({ _id: 'h2' as never }))!._runs).toBeUndefined();
    expect((await findRunStamps(other, 'int_h')).map((s) => s.collection)).toEqual(['policies']);
  });
});
