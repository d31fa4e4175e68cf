// The MongoDB-protocol server's `_id`-plus-other-fields lookup (scripts/mongo-server IdLookup): both
// backends answer such a query from the `_id` index and then match the whole query on what it found.
// These are the answers that must not change with it: the other fields still filter, conditional
// updates still apply once, `$in` with sort/skip/limit/projection still gives the exact subset.
// (bench/h2-id-lookup.ts measures the speed, on either backend.)
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collection, Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';

interface Item { _id: string; workspace: string; status: string; n: number }
let db: Connection;
let col: Collection<Item>;
const id = (n: number) => `itm_${String(n).padStart(4, '0')}`;

beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_idlookup_${randomBytes(4).toString('hex')}`);
  col = db.collection<Item>('items') as unknown as Collection<Item>;
  await col.insertMany(Array.from({ length: 200 }, (_, n) => ({ _id: id(n), workspace: n % 2 === 0 ? 'ws_a' : 'ws_b', status: 'open', n })));
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

describe('a query naming _id and other fields', () => {
  it('finds the document only when every other field matches too', async () => {
    expect((await col.findOne({ _id: id(10), workspace: 'ws_a' }))?.n).toBe(10);
    expect(await col.findOne({ _id: id(10), workspace: 'ws_b' })).toBeNull();
    expect(await col.countDocuments({ _id: id(10), workspace: 'ws_b' })).toBe(0);
    expect(await col.findOne({ _id: 'itm_missing', workspace: 'ws_a' })).toBeNull();
    // An operator on the other field, and _id given as an operator (not a plain value): both still answer rightly.
    expect((await col.findOne({ _id: id(11), n: { $gte: 11 } }))?.workspace).toBe('ws_b');
    expect(await col.findOne({ _id: id(11), n: { $gt: 11 } })).toBeNull();
    expect((await col.find({ _id: { $gte: id(198) }, workspace: 'ws_a' }).toArray()).map((d) => d.n)).toEqual([198]);
  });

  it('applies a conditional update once, and not at all when a condition does not hold', async () => {
    expect(await col.findOneAndUpdate({ _id: id(12), status: 'approved' }, { $set: { status: 'paid' } })).toBeNull();
    const none = await col.updateOne({ _id: id(12), status: 'approved' }, { $set: { status: 'paid' } });
    expect([none.matchedCount, none.modifiedCount]).toEqual([0, 0]);
    expect((await col.findOne({ _id: id(12) }))?.status).toBe('open');
    const racers = await Promise.all(Array.from({ length: 8 }, () => col.updateOne({ _id: id(12), status: 'open' }, { $set: { status: 'approved' } })));
    expect(racers.filter((r) => r.modifiedCount === 1)).toHaveLength(1);
    expect((await col.findOne({ _id: id(12) }))?.status).toBe('approved');
    const del = await col.deleteOne({ _id: id(14), workspace: 'ws_b' });
    expect(del.deletedCount).toBe(0);
    expect(await col.findOne({ _id: id(14) })).not.toBeNull();
  });

  it('gives the exact subset for $in with other fields, sort, skip, limit and projection', async () => {
    // 20..29 in ws_a with n >= 24: 24, 26, 28 → newest first 28, 26, 24 → skip 1 → 26, 24.
    const ids = Array.from({ length: 10 }, (_, i) => id(20 + i));
    const subset = await col.find({ _id: { $in: ids }, workspace: 'ws_a', n: { $gte: 24 } }).sort({ n: -1 }).skip(1).limit(2).project({ n: 1, _id: 0 }).toArray();
    expect(subset).toEqual([{ n: 26 }, { n: 24 }]);
    expect(await col.countDocuments({ _id: { $in: [...ids, 'itm_missing'] }, workspace: 'ws_b' })).toBe(5);
  });
});
