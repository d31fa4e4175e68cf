import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Schema, type Connection, type Model } from 'mongoose';
import { connectDatabase, ensureModel } from '../src/db.ts';
import {
  addPositions, positionKey, backfillPositions, countFromCounter, createPositioned, encodeCursor, pageNewestFirst, releasePosition,
} from '../src/paging.ts';

interface Thing { _id: string; workspace: string; kind: string; name: string; created_at: Date; pos?: number; pos_key?: string }

const dbName = `test_paging_${randomBytes(4).toString('hex')}`;
let db: Connection;
let things: Model<Thing>;

beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, dbName);
  const schema = new Schema<Thing>({
    _id: String, workspace: { type: String, required: true }, kind: String, name: String, created_at: Date,
  }, { versionKey: false });
  schema.index({ name: 1 }, { unique: true });
  addPositions(schema);
  things = db.model<Thing>('Thing', schema, 'things');
  await ensureModel(things);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

const ws = () => `ws_${randomBytes(4).toString('hex')}`;
let n = 0;
const thing = (workspace: string, kind = 'a'): Thing => {
  n++;
  return { _id: `t_${n}_${randomBytes(3).toString('hex')}`, workspace, kind, name: `thing ${n} ${randomBytes(3).toString('hex')}`, created_at: new Date(Date.now() + n) };
};

/** Every page from the first until next_cursor is absent. */
async function allPages(workspace: string, limit: number, extra: { match?: (t: Thing) => boolean; maxBuckets?: number } = {}) {
  const pages: Thing[][] = [];
  let cursor: string | undefined;
  do {
    const page = await pageNewestFirst<Thing>(things, { workspace, limit, cursor, ...extra });
    expect(page.rows.length).toBeLessThanOrEqual(limit);
    pages.push(page.rows);
    cursor = page.next_cursor;
  } while (cursor && pages.length < 1000);
  return pages;
}

describe('pageNewestFirst', () => {
  it('covers every record exactly once, newest first, across buckets and with creates running alongside', async () => {
    const w = ws();
    // 150 created 10 at a time: concurrent position takers still get distinct positions.
    for (let i = 0; i < 15; i++) await Promise.all(Array.from({ length: 10 }, () => createPositioned(things, thing(w))));
    const pos = (await things.find({ workspace: w }).lean()).map((t) => t.pos!);
    expect(new Set(pos).size).toBe(150);
    expect(Math.max(...pos)).toBe(150);

    const first = await pageNewestFirst<Thing>(things, { workspace: w, limit: 7 });
    expect(first.rows.map((r) => r.pos)).toEqual([150, 149, 148, 147, 146, 145, 144]);
    // Creates between pages land above the first page and never shift the pages that follow.
    await Promise.all(Array.from({ length: 5 }, () => createPositioned(things, thing(w))));
    const seen = [...first.rows];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await pageNewestFirst<Thing>(things, { workspace: w, limit: 7, cursor });
      seen.push(...page.rows);
      cursor = page.next_cursor;
    }
    expect(seen.map((r) => r.pos)).toEqual(Array.from({ length: 150 }, (_, i) => 150 - i));
    expect(new Set(seen.map((r) => r._id)).size).toBe(150);
    // A fresh walk sees the five new ones first.
    const fresh = (await allPages(w, 40)).flat();
    expect(fresh).toHaveLength(155);
    expect(fresh.slice(0, 5).map((r) => r.pos)).toEqual([155, 154, 153, 152, 151]);
    expect(await countFromCounter(db, 'things', w)).toBe(155);
  });

  it('ends without next_cursor on the last page, and answers an empty first page for an empty workspace', async () => {
    const w = ws();
    expect(await pageNewestFirst<Thing>(things, { workspace: w, limit: 5 })).toEqual({ rows: [] });
    for (let i = 0; i < 3; i++) await createPositioned(things, thing(w));
    const page = await pageNewestFirst<Thing>(things, { workspace: w, limit: 3 });
    expect(page.rows).toHaveLength(3);
    expect(page.next_cursor).toBeUndefined();
  });

  it('filters in memory: short pages with a cursor, and every match exactly once', async () => {
    const w = ws();
    for (let i = 0; i < 200; i++) await createPositioned(things, thing(w, i % 10 === 0 ? 'rare' : 'common'));
    const match = (t: Thing) => t.kind === 'rare';
    // One bucket per page: some pages are short (even empty) yet carry next_cursor.
    const pages = await allPages(w, 5, { match, maxBuckets: 1 });
    expect(pages.length).toBeGreaterThan(4);
    expect(pages.some((p) => p.length < 5)).toBe(true);
    const rows = pages.flat();
    expect(rows.every(match)).toBe(true);
    expect(rows.map((r) => r.pos)).toEqual(Array.from({ length: 20 }, (_, i) => 191 - 10 * i));
    // Without a low bucket cap, a page fills.
    const full = await pageNewestFirst<Thing>(things, { workspace: w, limit: 5, match });
    expect(full.rows.map((r) => r.pos)).toEqual([191, 181, 171, 161, 151]);
    expect(full.next_cursor).toBeDefined();
  });

  it('never shows another workspace', async () => {
    const [w1, w2] = [ws(), ws()];
    for (let i = 0; i < 4; i++) await Promise.all([createPositioned(things, thing(w1)), createPositioned(things, thing(w2))]);
    const rows = (await allPages(w1, 10)).flat();
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.workspace === w1)).toBe(true);
  });
});

describe('cursors', () => {
  it('refuses garbage, forged, edited and other lists\' cursors with invalid_input at /cursor', async () => {
    const w = ws();
    for (let i = 0; i < 10; i++) await createPositioned(things, thing(w));
    const good = (await pageNewestFirst<Thing>(things, { workspace: w, limit: 2 })).next_cursor!;
    const forged = `${Buffer.from(JSON.stringify({ p: 5 })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`;
    const [body, mac] = good.split('.');
    const edited = `${Buffer.from(JSON.stringify({ p: 1e6 })).toString('base64url')}.${mac}`;
    for (const cursor of ['garbage', 'a.b.c', forged, edited, `${body}.`, encodeCursor('things', ws(), 5), encodeCursor('other', w, 5), encodeCursor('things', w, 0)]) {
      await expect(pageNewestFirst<Thing>(things, { workspace: w, limit: 2, cursor })).rejects.toMatchObject({ code: 'invalid_input', field: '/cursor' });
    }
    expect((await pageNewestFirst<Thing>(things, { workspace: w, limit: 2, cursor: good })).rows.map((r) => r.pos)).toEqual([8, 7]);
  });
});

describe('counters', () => {
  it('counts deletes, and gives the count back when an insert fails after taking a position', async () => {
    const w = ws();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createPositioned(things, thing(w)));
    expect(await countFromCounter(db, 'things', w)).toBe(5);
    await things.deleteOne({ _id: made[1]._id });
    await releasePosition(db, 'things', w);
    expect(await countFromCounter(db, 'things', w)).toBe(4);
    // Same unique name: the insert fails with a duplicate key and live stays right.
    await expect(createPositioned(things, { ...thing(w), name: made[0].name })).rejects.toMatchObject({ code: 11000 });
    expect(await countFromCounter(db, 'things', w)).toBe(4);
    // The deleted one and the failed position are holes that pages skip.
    const rows = (await allPages(w, 2)).flat();
    expect(rows.map((r) => r._id)).toEqual([made[4], made[3], made[2], made[0]].map((t) => t._id));
    await createPositioned(things, thing(w));
    expect(await countFromCounter(db, 'things', w)).toBe(5);
    expect((await pageNewestFirst<Thing>(things, { workspace: w, limit: 1 })).rows[0].pos).toBe(7);
  });
});

describe('backfillPositions', () => {
  it('positions old documents in created_at order, sets the counters, and is idempotent', async () => {
    const [w1, w2] = [ws(), ws()];
    const base = Date.now() - 1e6;
    // Written before paging: no pos, inserted out of creation order.
    const old = Array.from({ length: 100 }, (_, i) => ({ ...thing(i % 3 === 0 ? w2 : w1), created_at: new Date(base + ((i * 37) % 100) * 1000) }));
    await things.collection.insertMany(old as any[]);
    const done = await backfillPositions(things);
    expect(done).toBeGreaterThanOrEqual(100);
    // A later start reads the series' marker instead of scanning for documents without a position.
    expect(await db.collection('list_counters').findOne({ _id: 'backfilled:things' } as never)).not.toBeNull();
    expect(await backfillPositions(things)).toBe(0);
    for (const w of [w1, w2]) {
      const mine = old.filter((t) => t.workspace === w).sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
      expect(await countFromCounter(db, 'things', w)).toBe(mine.length);
      const rows = (await allPages(w, 9)).flat();
      expect(rows.map((r) => r._id)).toEqual(mine.map((t) => t._id));
      expect(rows.every((r) => r.pos_key === positionKey('things', w, r.pos!))).toBe(true);
    }
    // New documents continue after the backfilled ones.
    const next = await createPositioned(things, thing(w1));
    expect((await pageNewestFirst<Thing>(things, { workspace: w1, limit: 1 })).rows[0]._id).toBe(next._id);
    expect(await countFromCounter(db, 'things', w1)).toBe(old.filter((t) => t.workspace === w1).length + 1);
  });
});
