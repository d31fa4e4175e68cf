// The MongoDB-protocol server's `_id`-plus-other-fields lookup (scripts/mongo-server IdLookup): both
// backends answer such a query from the `_id` index and then match the whole query on what it found.
// These are the answers that must not change with it: the other fields still filter, conditional
// updates still apply once, `$in` with sort/skip/limit/projection still gives the exact subset.
// (bench/h2-id-lookup.ts measures the speed, on either backend.)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collection, Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { startMongo } from '../../scripts/infra.ts';

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

describe('a query naming every key of a unique index of several keys, one of them by $in (issue 33)', () => {
  interface Entry { _id: string; workspace: string; seq: number; tool: string }
  let entries: Collection<Entry>;
  beforeAll(async () => {
    entries = db.collection<Entry>('entries') as unknown as Collection<Entry>;
    await entries.createIndex({ workspace: 1, seq: 1 }, { unique: true });
    // Two tenants interleaved, 150 positions each; every third entry is a create.
    await entries.insertMany(Array.from({ length: 300 }, (_, i) => ({ _id: `e_${i}`, workspace: i % 2 === 0 ? 'ws_a' : 'ws_b', seq: Math.floor(i / 2) + 1, tool: i % 3 === 0 ? 'x.create' : 'x.list' })));
  });

  it('answers exactly the positions asked, of that workspace only, with the other fields still filtering', async () => {
    const seqs = Array.from({ length: 20 }, (_, i) => 101 + i); // 101..120
    const a = await entries.find({ workspace: 'ws_a', seq: { $in: [...seqs, 999] } }).toArray();
    expect(a.map((e) => e.seq).sort((x, y) => x - y)).toEqual(seqs);
    expect(new Set(a.map((e) => e.workspace))).toEqual(new Set(['ws_a']));
    // ws_a's entry at seq s is i = 2(s−1): a create when 2(s−1) is a multiple of 3, i.e. s ≡ 1 (mod 3): 103, 106, …, 118.
    const creates = await entries.find({ workspace: 'ws_a', seq: { $in: seqs }, tool: 'x.create' }, { projection: { _id: 0, seq: 1 } }).toArray();
    expect(creates.map((e) => e.seq).sort((x, y) => x - y)).toEqual([103, 106, 109, 112, 115, 118]);
    expect(await entries.countDocuments({ workspace: 'ws_c', seq: { $in: seqs } })).toBe(0);
    // Both keys plain, plus another field: the single position, filtered.
    expect((await entries.findOne({ workspace: 'ws_b', seq: 7, tool: 'x.list' }))?._id).toBe('e_13');
    expect(await entries.findOne({ workspace: 'ws_b', seq: 7, tool: 'x.create' })).toBeNull();
  });

  it('keeps sort, limit and a changed key in step with the index', async () => {
    const newest = await entries.find({ workspace: 'ws_b', seq: { $in: [1, 2, 3, 4, 5] } }).sort({ seq: -1 }).limit(2).toArray();
    expect(newest.map((e) => e.seq)).toEqual([5, 4]);
    // A document whose key changes is found under its new key only.
    await entries.updateOne({ workspace: 'ws_b', seq: 5 }, { $set: { seq: 500 } });
    expect(await entries.countDocuments({ workspace: 'ws_b', seq: { $in: [5] } })).toBe(0);
    expect((await entries.findOne({ workspace: 'ws_b', seq: { $in: [500] } }))?._id).toBe('e_9');
  });
});

describe('the H2 store\'s unique indexes (issue 33: keys compared on remembered bytes, a page cache of 256 MB)', () => {
  it('finds every key by equality and by $in, refuses a duplicate, and answers the same from the file after a restart', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'h2-keys-'));
    const file = path.join(dir, 'data.mv');
    // Keys whose serialized bytes order unlike their values (negative and positive numbers, longer and
    // shorter strings, accents): the index is ordered by those bytes, so a comparison that disagreed with
    // H2's own would lose keys the moment a search crossed them.
    const names = ['a', 'ab', 'b', 'Ñandú', 'zz', 'é', '', 'a'.repeat(300)];
    const keys = Array.from({ length: 400 }, (_, i) => ({ workspace: names[i % names.length], n: i % 2 === 0 ? -i : i * 1_000_003, half: i / 2 }));
    const check = async (col: Collection<{ workspace: string; n: number; half: number }>) => {
      for (const k of keys.filter((_, i) => i % 7 === 0)) expect((await col.findOne({ workspace: k.workspace, n: k.n }))?.half).toBe(k.half);
      const some = keys.filter((k) => k.workspace === 'Ñandú');
      const found = await col.find({ workspace: 'Ñandú', n: { $in: [...some.map((k) => k.n), 12345] }, half: { $gte: 100 } }).toArray();
      expect(found.map((d) => d.half).sort((x, y) => x - y)).toEqual(some.map((k) => k.half).filter((h) => h >= 100).sort((x, y) => x - y));
      expect(await col.countDocuments({ workspace: 'zz', n: -3 })).toBe(0);
    };
    let mongo = await startMongo({ backend: 'h2', file });
    try {
      let db = await connectDatabase(mongo.url, 'h2keys');
      const col = () => db.collection('keys') as unknown as Collection<{ workspace: string; n: number; half: number }>;
      await col().createIndex({ workspace: 1, n: 1 }, { unique: true });
      // Shuffled in: every insert walks the B-tree through keys of every kind.
      await col().insertMany(keys.map((_, i) => ({ ...keys[(i * 7919) % keys.length] })));
      await check(col());
      await expect(col().insertOne({ ...keys[5] })).rejects.toMatchObject({ code: 11000 });
      await db.close();
      await mongo.stop();
      mongo = await startMongo({ backend: 'h2', file, port: mongo.port });
      db = await connectDatabase(mongo.url, 'h2keys');
      await check(col());
      await expect(col().insertOne({ ...keys[6] })).rejects.toMatchObject({ code: 11000 });
      expect(await col().countDocuments({})).toBe(keys.length);
      await db.close();
    } finally {
      await mongo.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
