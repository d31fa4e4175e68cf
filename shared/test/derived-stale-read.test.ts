// A writer that read a source document while a dead writer's intent was still on it, and reaches
// settleInFlight only after another process took that intent over and finished it (applied, taken
// off the source, marks forgotten, marker deleted), must not apply it again: the "no marker, so
// claim by inserting one" path saw only its stale read. Seen in the full suite as a board column
// left at count −1 (crm deals.test.ts › "moves a card whose last mover died …", intermittent).
import { randomBytes } from 'node:crypto';
import mongoose, { type Connection } from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectDatabase } from '../src/db.ts';
import { applyIntent, derivedIntent, DONE_MARKS, markIntent, REPAIR_AFTER_MS, settleInFlight, type FeedsDerived } from '../src/derived.ts';

let db: Connection;
beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_derived_${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

it('does not apply again an intent another process finished after this writer read the document', async () => {
  const sources: mongoose.Model<any> = db.model('Card', new mongoose.Schema({ _id: String, pending_derived: Array }, { strict: false }), 'cards') as never;
  const deadAt = new Date(Date.now() - REPAIR_AFTER_MS - 5_000);
  const intent = derivedIntent([{ coll: 'columns', id: 'col_a', inc: [['count', -1]] }], deadAt)!;
  await db.collection('columns').insertOne({ _id: 'col_a', count: 1 } as never);
  await markIntent(db, 'ws1', sources, 'card1', intent);
  await sources.collection.insertOne({ _id: 'card1', pending_derived: [intent] } as never);
  // The next writer reads the document (the dead writer's intent on it) …
  const staleRead = (await sources.collection.findOne({ _id: 'card1' } as never)) as FeedsDerived;
  // … and meanwhile another process takes the intent over and finishes it.
  await applyIntent(db, sources, 'card1', intent);
  expect((await db.collection('columns').findOne({ _id: 'col_a' } as never))!.count).toBe(0);
  // The first writer now settles from what it read: the intent is done; nothing is applied again.
  expect(await settleInFlight(db, 'ws1', sources, 'card1', staleRead)).toBe(false);
  expect((await db.collection('columns').findOne({ _id: 'col_a' } as never))!.count).toBe(0);
  expect(await db.collection('derived_pending').countDocuments({ _id: intent.id } as never)).toBe(0);
});

// A repair that won its claim while the live writer — slower than REPAIR_AFTER_MS — was still
// applying: the writer finishes (intent off the source, marks forgotten), then the repair applies
// the intent it read before. Forgotten marks let it count again (a column's count and amount
// doubled, a card pushed twice); the marks of the last finished intents must refuse it.
it('does not apply again an intent a second applier read before the first finished it, counters nor cards', async () => {
  const sources: mongoose.Model<any> = db.model('Card2', new mongoose.Schema({ _id: String, pending_derived: Array }, { strict: false }), 'cards2') as never;
  const at = new Date(Date.now() - REPAIR_AFTER_MS - 5_000);
  const intent = derivedIntent([{ coll: 'columns2', id: 'col_b', inc: [['count', 1], ['amount', 500]], push: [['cards', { k: 'a', i: 'deal1' }, { k: 1, i: 1 }]] }], at)!;
  await markIntent(db, 'ws1', sources, 'card2', intent);
  await sources.collection.insertOne({ _id: 'card2', pending_derived: [intent] } as never);
  // The second applier's read: the intent is still on the source.
  const read = ((await sources.collection.findOne({ _id: 'card2' } as never)) as FeedsDerived).pending_derived![0];
  // The first applier finishes it …
  await applyIntent(db, sources, 'card2', intent);
  // … and the second applies what it read.
  await applyIntent(db, sources, 'card2', read);
  const column = (await db.collection('columns2').findOne({ _id: 'col_b' } as never))!;
  expect([column.count, column.amount, column.cards]).toEqual([1, 500, [{ k: 'a', i: 'deal1' }]]);
  expect(column.applied).toEqual([]);
  expect(column.done).toEqual([`${intent.id}#0`]);
});

it('remembers only the last DONE_MARKS finished marks on a derived document', async () => {
  const sources: mongoose.Model<any> = db.model('Card3', new mongoose.Schema({ _id: String, pending_derived: Array }, { strict: false }), 'cards3') as never;
  for (let i = 0; i < DONE_MARKS + 6; i++) {
    const intent = derivedIntent([{ coll: 'columns3', id: 'col_c', inc: [['count', 1]] }], new Date())!;
    await markIntent(db, 'ws1', sources, `card3_${i}`, intent);
    await sources.collection.insertOne({ _id: `card3_${i}`, pending_derived: [intent] } as never);
    await applyIntent(db, sources, `card3_${i}`, intent);
  }
  const column = (await db.collection('columns3').findOne({ _id: 'col_c' } as never))!;
  expect(column.count).toBe(DONE_MARKS + 6);
  expect(column.done).toHaveLength(DONE_MARKS);
});
