import { startMongo } from '../scripts/infra.ts';
import mongoose from 'mongoose';
const m = await startMongo({ backend: 'memory' });
const c = await mongoose.createConnection(m.url, { dbName: 'i' }).asPromise();
const col = c.db!.collection<any>('x');
await col.insertOne({ _id: 'b', n: 0 });
try {
  const r = await col.insertMany([{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }, { _id: 'c', n: 3 }, { _id: 'a', n: 4 }, { _id: 'd', n: 5 }], { ordered: false });
  console.log('ok', r);
} catch (e: any) {
  console.log('err', e.name, e.code, JSON.stringify(e.writeErrors?.map?.((w: any) => ({ i: w.index, c: w.code })) ?? e.writeErrors), e.result?.insertedCount, JSON.stringify(e.insertedIds));
}
console.log(JSON.stringify(await col.find({}).sort({ _id: 1 }).toArray()));
const bw = await col.bulkWrite([{ updateOne: { filter: { _id: 'a', n: 1 }, update: { $set: { n: 10 } } } }, { updateOne: { filter: { _id: 'c', n: 99 }, update: { $set: { n: 30 } } } }, { updateOne: { filter: { _id: 'd' }, update: { $set: { n: 50, u: undefined } } } }], { ordered: false, ignoreUndefined: true });
console.log('bulk', bw.matchedCount, bw.modifiedCount, JSON.stringify(await col.find({}).sort({ _id: 1 }).toArray()));
process.exit(0);
