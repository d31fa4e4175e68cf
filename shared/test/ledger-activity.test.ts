// The ledger's per-day activity counters (issue 33): the activity metric reads the days asked plus
// the entries appended since the last counted block, never the whole chain. Checked against a count
// of the stored entries made here, by this test, from the collection itself.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { Governance } from '../src/governance/index.ts';
import { ACTIVITY_BLOCK, Ledger } from '../src/governance/ledger.ts';
import { localDate } from '../src/periods.ts';
import type { Principal } from '../src/principal.ts';
import { positionsAsked } from './ledger-positions-asked.ts';

let db: Connection;
beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_activity_${randomBytes(4).toString('hex')}`, { monitorCommands: true });
  await new Governance(db).init();
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

const principal = (ws: string, run?: string): Principal => ({ workspace: ws, role: 'owner', actor: { type: 'api_key', id: 'k' }, credential_id: 'k', scopes: null, patterns: null, ...(run ? { run } : {}) });
const append = (ledger: Ledger, ws: string, n: number, tool: (i: number) => string = (i) => (i % 3 === 0 ? 'tasks.create' : 'projects.list'), run?: string) =>
  Promise.all(Array.from({ length: n }, (_, i) => ledger.append({ principal: principal(ws, run), tool: tool(i), risk: 'read', input_digest: null, outcome: 'ok', duration_ms: 1 })));
const today = () => localDate(new Date());
/** This test's own count, from the stored entries: per tool, for one day. */
async function countStored(ws: string, day: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const e of await db.collection('ledger').find({ workspace: ws }).toArray()) {
    if (localDate(new Date(e.at as string)) === day) out[e.tool as string] = (out[e.tool as string] ?? 0) + 1;
  }
  return out;
}
const flat = (a: Awaited<ReturnType<Ledger['activity']>>, day: string) => Object.fromEntries([...(a.tools.get(day) ?? new Map())].map(([t, c]) => [t, c.count]));

describe('ledger activity counters', () => {
  it('counts complete blocks into the days once, however many processes count, and adds the uncounted tail at read', async () => {
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    const [a, b] = [new Ledger(db), new Ledger(db)];
    await append(a, ws, 250);
    await append(b, ws, 3, () => 'agents.run', 'run_1');
    // Two processes catch up at once (and the appends' own background counting may be running too): each block counted once.
    await Promise.all([a.countActivity(ws), b.countActivity(ws), a.countActivity(ws)]);
    const day = today();
    const mine = await countStored(ws, day);
    // 250 appended: i ≡ 0 (mod 3) for i in 0..249 → 84 creates, 166 lists; then 3 run calls. 253 entries, 2 blocks counted, 53 in the tail.
    expect(mine).toEqual({ 'tasks.create': 84, 'projects.list': 166, 'agents.run': 3 });
    const marks = await db.collection('ledger_activity_marks').findOne({ _id: ws as never });
    expect(marks?.block).toBe(2);
    const counter = await db.collection('ledger_activity').findOne({ _id: `${ws}|${day}` as never });
    expect(counter?.n).toBe(2 * ACTIVITY_BLOCK);
    expect([...(counter?.blocks as number[])].sort()).toEqual([1, 2]);
    const read = await a.activity(ws, day, day);
    expect(read.perDay.get(day)).toBe(253);
    expect(flat(read, day)).toEqual(mine);
    expect(read.tools.get(day)?.get('agents.run')).toEqual({ count: 3, by_runs: 3 });
    // Another workspace's chain counts nothing here.
    const other = `ws_${randomBytes(4).toString('hex')}`;
    await append(a, other, 120);
    expect((await a.activity(ws, day, day)).perDay.get(day)).toBe(253);
  });

  it('reads the counters, not the counted entries, and never counts a half-counted block twice', async () => {
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    const ledger = new Ledger(db);
    await append(ledger, ws, 230, () => 'parties.create');
    await ledger.countActivity(ws);
    const day = today();
    // The counted entries are renamed in the store: a read that walked them would see the new name.
    await db.collection('ledger').updateMany({ workspace: ws, seq: { $lte: 200 } }, { $set: { tool: 'renamed.after' } });
    const read = await ledger.activity(ws, day, day);
    expect(flat(read, day)).toEqual({ 'parties.create': 230 });
    // A process died after adding block 3 to the day but before moving the mark: 30 more, block 3 complete.
    await append(ledger, ws, 70, () => 'parties.create');
    const before = await db.collection('ledger_activity').findOne({ _id: `${ws}|${day}` as never });
    await db.collection('ledger_activity').updateOne({ _id: `${ws}|${day}` as never }, { $inc: { n: 100, 't.parties:create': 100 }, $push: { blocks: 3 } } as never);
    await db.collection('ledger_activity_marks').updateOne({ _id: ws as never }, { $set: { block: 2 } });
    expect((await ledger.activity(ws, day, day)).perDay.get(day)).toBe(300);
    // The catch-up skips the day already holding block 3 and moves the mark.
    await ledger.countActivity(ws);
    expect((await db.collection('ledger_activity_marks').findOne({ _id: ws as never }))?.block).toBe(3);
    expect((await db.collection('ledger_activity').findOne({ _id: `${ws}|${day}` as never }))?.n).toBe((before?.n as number) + 100);
    expect((await ledger.activity(ws, day, day)).perDay.get(day)).toBe(300);
    // Days outside the span are not counted; a read writes nothing.
    const counters = await db.collection('ledger_activity').countDocuments({});
    expect((await ledger.activity(ws, '2020-01-01', '2020-12-31')).perDay.size).toBe(0);
    expect(await db.collection('ledger_activity').countDocuments({})).toBe(counters);
  });

  it('asks the store for the uncounted tail, not a window of positions past the head, and still finds entries past a lagging head hint', async () => {
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    const ledger = new Ledger(db);
    await append(ledger, ws, 250, () => 'parties.list');
    await ledger.countActivity(ws);
    const day = today();
    /** The activity read, and how many entry positions it asked the store for (each a lookup on the store's side). */
    const read = async () => {
      const { result, asked } = await positionsAsked(db, () => ledger.activity(ws, day, day));
      return { total: result.perDay.get(day), asked };
    };
    // 2 blocks counted, 50 entries in the tail: the tail and a short look past the head (it was 500 positions past it on every read).
    const first = await read();
    expect(first.total).toBe(250);
    expect(first.asked).toBeLessThanOrEqual(50 + 16);
    // The head hint lags its entries (a writer died between storing a batch and moving it): the 20 past it are found.
    await db.collection('ledger_heads').updateOne({ _id: ws as never }, { $set: { seq: 230 } });
    const lagging = await read();
    expect(lagging.total).toBe(250);
    expect(lagging.asked).toBeLessThanOrEqual(50 + 64);
  });
});
