// Writes of many callers in one command (shared/src/coalesce.ts), and the Idempotency-Key records
// that use it: one command per turn while none is in flight, each caller answered for its own item.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mongoose, { type Connection } from 'mongoose';
import { Coalescer } from '../src/coalesce.ts';
import { Governance } from '../src/governance/index.ts';

describe('Coalescer', () => {
  it('sends what is asked in one turn as one command, and what queues meanwhile as the next', async () => {
    const commands: number[][] = [];
    let release!: () => void;
    const c = new Coalescer<number>(async (items) => {
      commands.push(items);
      if (commands.length === 1) await new Promise<void>((r) => { release = r; });
      return items.map((n) => (n % 5 === 0 ? new Error(`no ${n}`) : null));
    });
    const first = [1, 2, 3].map((n) => c.add(n));
    await new Promise((r) => setTimeout(r, 10));
    const second = [4, 5, 6].map((n) => c.add(n)); // the first command is still in flight
    await new Promise((r) => setTimeout(r, 10));
    expect(commands).toEqual([[1, 2, 3]]);
    release();
    await Promise.all(first);
    const settled = await Promise.allSettled(second);
    expect(commands).toEqual([[1, 2, 3], [4, 5, 6]]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason.message).toBe('no 5');
  });

  it('fails every item of a command that fails as a whole, and goes on with the next', async () => {
    let calls = 0;
    const c = new Coalescer<number>(async (items) => {
      calls++;
      if (calls === 1) throw new Error('store down');
      return items.map(() => null);
    });
    const failed = await Promise.allSettled([c.add(1), c.add(2)]);
    expect(failed.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    await expect(c.add(3)).resolves.toBeUndefined();
  });
});

// Command monitoring on, to count and read the commands sent.
let db: Connection;
beforeAll(async () => {
  db = await mongoose.createConnection(process.env.MONGO_URL!, { dbName: `test_coalesce_${randomBytes(4).toString('hex')}`, monitorCommands: true }).asPromise();
  await new Governance(db).init();
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

describe('Idempotency-Key records written together', () => {

  it('runs each key once when 40 first uses of 10 keys arrive together, and replays each key its own answer', async () => {
    const g = new Governance(db);
    // Per insert / update command on the records, how many documents or updates it carried.
    const sizes: { insert: number[]; update: number[] } = { insert: [], update: [] };
    const firstInsert: { _id: string; ids?: string[] }[] = [];
    const count = (e: { commandName: string; command: { insert?: string; update?: string; documents?: { _id: string; ids?: string[] }[]; updates?: unknown[] } }) => {
      if (e.command.insert === 'idempotency') {
        if (firstInsert.length === 0) firstInsert.push(...(e.command.documents ?? []));
        sizes.insert.push((e.command.documents ?? []).filter((d) => !String(d._id).startsWith('~expiry|')).length);
      }
      if (e.command.update === 'idempotency') sizes.update.push(e.command.updates?.length ?? 0);
    };
    db.getClient().on('commandStarted', count);
    const keys = Array.from({ length: 10 }, (_, i) => `k-${i}`);
    const begins = keys.flatMap((k) => [0, 1, 2, 3].map(() => g.idempotency.begin('ws_c', k, 'parties.create', `d-${k}`)));
    const runs = new Map<string, Awaited<(typeof begins)[number]>>();
    // The runs answer as soon as they start; the 30 duplicates wait for them and replay.
    const started = await Promise.all(begins.map((p, i) => Promise.race([p, new Promise((r) => setTimeout(() => r(null), 300))]).then((s) => [i, s] as const)));
    for (const [i, s] of started) if (s && (s as { kind: string }).kind === 'run') runs.set(keys[Math.floor(i / 4)], s as never);
    expect([...runs.keys()].sort()).toEqual([...keys].sort());
    await Promise.all([...runs].map(([k, r]) => (r as { complete(a: unknown): Promise<void> }).complete({ status: 200, body: { tool: 'parties.create', output: { key: k } } })));
    const all = await Promise.all(begins);
    db.getClient().off('commandStarted', count);
    expect(all.filter((s) => s.kind === 'run')).toHaveLength(10);
    for (const [i, s] of all.entries()) {
      if (s.kind === 'replay') expect(s.answer.body).toEqual({ tool: 'parties.create', output: { key: keys[Math.floor(i / 4)] } });
    }
    // The forty first uses went out as one command (the duplicates then wait and ask again, one by one);
    // the ten answers stored together as one.
    expect(sizes.insert[0]).toBe(40);
    // Ahead of them in the same command, the expiry marker naming all forty ids (one hour).
    expect(firstInsert[0]._id).toMatch(/^~expiry\|\d{4}-\d\d-\d\dT\d\d\|[0-9a-f]{16}\|\d+$/);
    expect(firstInsert[0].ids).toEqual(firstInsert.slice(1).map((d) => d._id));
    expect(firstInsert).toHaveLength(41);
    expect(sizes.update).toEqual([10]);
    expect(await db.collection('idempotency').countDocuments({ workspace: 'ws_c' })).toBe(10);
  });
});

describe('the Idempotency-Key retention sweep', () => {

  it('deletes what expired by the expiry index, never by reading every record, and keeps what is alive or used again', async () => {
    const g = new Governance(db);
    const hour = 3600_000;
    const now = new Date('2026-11-26T20:30:00Z');
    const use = async (key: string, at: Date) => {
      const run = await g.idempotency.begin('ws_s', key, 'parties.list', 'd', at);
      if (run.kind !== 'run') throw new Error(`${key} did not run`);
      await run.complete({ status: 200, body: { tool: 'parties.list', output: { key } } });
    };
    await use('expired-long-ago', new Date(now.getTime() - 72 * hour));
    await use('expired-2h-ago', new Date(now.getTime() - 50 * hour));
    await use('alive', new Date(now.getTime() - 47 * hour));
    await use('used-again', new Date(now.getTime() - 60 * hour));
    await use('used-again', now); // expired, so taken anew: its old hour still lists it
    // A record written before the index existed: indexed once when a store starts on this database.
    await db.collection('idempotency').insertOne({ _id: 'ws_s:from-before' as never, workspace: 'ws_s', tool: 'parties.list', input_digest: 'd', state: 'done', answer: null, run: 'r', lease_until: now, created_at: new Date(now.getTime() - 70 * hour), expires_at: new Date(now.getTime() - 22 * hour) });
    // An hour indexed the way before markers (a chunk document of ids), with its expired record.
    await db.collection('idempotency').insertOne({ _id: 'ws_s:chunked' as never, workspace: 'ws_s', tool: 'parties.list', input_digest: 'd', state: 'done', answer: null, run: 'r2', lease_until: now, created_at: new Date(now.getTime() - 63 * hour), expires_at: new Date(now.getTime() - 15 * hour) });
    await db.collection('idempotency_expiry').insertOne({ _id: '2026-11-26T05' as never, chunks: ['2026-11-26T05|old'] });
    await db.collection('idempotency_expiry_ids').insertOne({ _id: '2026-11-26T05|old' as never, ids: ['ws_s:chunked'] });
    await db.collection('migrations').deleteOne({ _id: 'idempotency-expiry-index' as never });
    await new Governance(db).idempotency.init();

    const sent: { name: string; command: Record<string, any> }[] = [];
    const listen = (e: { commandName: string; command: Record<string, any> }) => sent.push({ name: e.commandName, command: e.command });
    db.getClient().on('commandStarted', listen);
    const deleted = await g.idempotency.sweep(now);
    db.getClient().off('commandStarted', listen);

    // expired-long-ago, expired-2h-ago, from-before, chunked — twice listed (the migration's marker and its
    // old chunk), deleted once (the first used-again went when its key was taken anew)
    expect(deleted).toBe(4);
    expect(await db.collection('idempotency_expiry_ids').countDocuments({})).toBe(0);
    const left = (await db.collection('idempotency').find({ workspace: 'ws_s' }).toArray()).map((d) => String(d._id)).sort();
    expect(left).toEqual(['ws_s:alive', 'ws_s:used-again']);
    // The records were only ever named by _id: the only reads are of markers by their ids, every delete by `_id: {$in}`.
    const finds = sent.filter((c) => c.name === 'find' && c.command.find === 'idempotency');
    expect(finds.length).toBeGreaterThan(0);
    for (const f of finds) {
      expect(Object.keys(f.command.filter)).toEqual(['_id']);
      for (const id of f.command.filter._id.$in) expect(id).toMatch(/^~expiry\|/);
    }
    const deletes = sent.filter((c) => c.name === 'delete' && c.command.delete === 'idempotency');
    expect(deletes.length).toBeGreaterThan(0);
    for (const d of deletes) for (const q of d.command.deletes) expect(q.q._id.$in).toBeInstanceOf(Array);
    // The hours swept are gone from the index; a second sweep finds nothing more.
    expect(await g.idempotency.sweep(now)).toBe(0);
    const hours = (await db.collection('idempotency_expiry').find({}).toArray()).map((d) => String(d._id)).sort();
    expect(hours.every((h) => h >= '2026-11-26T20')).toBe(true);
  });

  it('takes back the records of a batch whose expiry marker cannot be stored, and sweeps over the gap', async () => {
    const g = new Governance(db);
    const hour = 3600_000;
    const at = new Date('2026-11-20T10:15:00Z');
    const first = await g.idempotency.begin('ws_m', 'k-1', 'parties.list', 'd', at);
    expect(first.kind).toBe('run');
    // The marker the next batch will use is taken by someone else: that insert fails at the marker.
    const [series] = ((await db.collection('idempotency_expiry').findOne({ _id: '2026-11-22T10' as never }))?.series ?? []) as string[];
    await db.collection('idempotency').insertOne({ _id: `~expiry|${series}|1` as never, ids: [] });
    const inserts: { documents: { _id: string }[]; writeErrors?: unknown }[] = [];
    const started = (e: { command: { insert?: string; documents?: { _id: string }[] } }) => {
      if (e.command.insert === 'idempotency') inserts.push({ documents: e.command.documents ?? [] });
    };
    db.getClient().on('commandStarted', started);
    const second = await g.idempotency.begin('ws_m', 'k-2', 'parties.list', 'd', at);
    db.getClient().off('commandStarted', started);
    // Its record was stored without a marker, so it was taken back and the key taken again, under the next marker.
    expect(inserts.map((c) => c.documents.map((d) => d._id))).toEqual([[`~expiry|${series}|1`, 'ws_m:k-2'], [`~expiry|${series}|2`, 'ws_m:k-2']]);
    expect(second.kind).toBe('run');
    const record = await db.collection('idempotency').findOne({ _id: 'ws_m:k-2' as never });
    expect(record?.run).toBe(second.kind === 'run' ? second.run : null);
    // The sweep walks over the marker that was not ours and deletes both records.
    expect(await g.idempotency.sweep(new Date(at.getTime() + 50 * hour))).toBe(2);
    expect(await db.collection('idempotency').countDocuments({ _id: { $in: ['ws_m:k-1', 'ws_m:k-2', `~expiry|${series}|0`, `~expiry|${series}|1`, `~expiry|${series}|2`] } as never })).toBe(0);
  });
});
