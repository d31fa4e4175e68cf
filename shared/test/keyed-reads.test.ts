import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { readByKeys } from '../src/keyed-reads.ts';

const dbName = `test_keyed_reads_${randomBytes(4).toString('hex')}`;
let db: Connection;
let finds = 0;
/** The next command fails as the store would (its toArray rejects). */
let failNext = false;

beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, dbName);
  await db.collection('docs').insertMany([
    { _id: 'a|1', ws: 'a', n: 1, tag: 'x' }, { _id: 'a|2', ws: 'a', n: 2, tag: 'y' }, { _id: 'b|1', ws: 'b', n: 1, tag: 'z' },
  ] as never[]);
  // Counts the commands sent: readByKeys reads through the connection's collection.
  const docs = db.collection('docs') as unknown as { find: (...a: unknown[]) => unknown };
  const find = docs.find.bind(docs);
  docs.find = (...a: unknown[]) => {
    finds++;
    if (failNext) {
      failNext = false;
      return { toArray: () => Promise.reject(new Error('store unreachable')) };
    }
    return find(...a);
  };
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

type Doc = { _id: string; ws: string; n: number; tag?: string };

it('reads asked in one turn share one command; each gets only its own keys, in its order, once each', async () => {
  finds = 0;
  const [first, second, third] = await Promise.all([
    readByKeys<Doc>(db, 'docs', '_id', ['a|2', 'a|1', 'a|2', 'a|9']),
    readByKeys<Doc>(db, 'docs', '_id', ['b|1']),
    readByKeys<Doc>(db, 'docs', '_id', ['a|1']),
  ]);
  expect(finds).toBe(1);
  expect(first.map((d) => d._id)).toEqual(['a|2', 'a|1']);
  expect(second.map((d) => d._id)).toEqual(['b|1']);
  expect(third.map((d) => d._id)).toEqual(['a|1']);
  // Two reads of one document: what one caller changes on its copy the other does not see.
  (third[0] as Partial<Doc>).n = 99;
  delete (third[0] as Partial<Doc>).tag;
  expect(first[1]).toEqual({ _id: 'a|1', ws: 'a', n: 1, tag: 'x' });
});

it('a later turn, another field or another projection is another command', async () => {
  finds = 0;
  const [byId, projected, byWs] = await Promise.all([
    readByKeys<Doc>(db, 'docs', '_id', ['a|1']),
    readByKeys<Doc>(db, 'docs', '_id', ['a|1'], { n: 1 }),
    readByKeys<Doc>(db, 'docs', 'tag', ['y']),
  ]);
  expect(finds).toBe(3);
  expect(byId).toEqual([{ _id: 'a|1', ws: 'a', n: 1, tag: 'x' }]);
  expect(projected).toEqual([{ _id: 'a|1', n: 1 }]);
  expect(byWs.map((d) => d._id)).toEqual(['a|2']);
  await readByKeys<Doc>(db, 'docs', '_id', ['b|1']);
  expect(finds).toBe(4);
  expect(await readByKeys<Doc>(db, 'docs', '_id', [])).toEqual([]);
  expect(finds).toBe(4);
});

it('a failed command fails every read of its batch, and the next turn reads afresh', async () => {
  finds = 0;
  failNext = true;
  const settled = await Promise.allSettled([
    readByKeys<Doc>(db, 'docs', '_id', ['a|1']),
    readByKeys<Doc>(db, 'docs', '_id', ['b|1']),
  ]);
  expect(finds).toBe(1);
  expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  expect((settled[0] as PromiseRejectedResult).reason.message).toBe('store unreachable');
  // Nothing of the failed batch is kept: the next read sends its own command and gets its document.
  expect((await readByKeys<Doc>(db, 'docs', '_id', ['a|1'])).map((d) => d._id)).toEqual(['a|1']);
  expect(finds).toBe(2);
});
