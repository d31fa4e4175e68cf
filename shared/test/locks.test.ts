import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { CuadraError, withLock } from '../src/index.ts';
import { LOCK_LEASE_MS } from '../src/locks.ts';

let db: Connection;
beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_locks_${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

describe('withLock', () => {
  it('runs holders one after another, refuses a waiter past its wait with conflict, and lets nothing run twice', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = withLock(db, 'l1', () => new Promise<void>((r) => { order.push('first'); release = r; }));
    await new Promise((r) => setTimeout(r, 50));
    const refused = await withLock(db, 'l1', async () => order.push('never'), { waitMs: 200 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CuadraError);
    expect((refused as CuadraError).code).toBe('conflict');
    const waiting = withLock(db, 'l1', async () => order.push('second'));
    release();
    await Promise.all([held, waiting]);
    expect(order).toEqual(['first', 'second']);
    expect(await db.collection('locks').countDocuments({ _id: 'l1' } as never)).toBe(0);
  });

  it('takes over a lock whose holder died once its lease is over', async () => {
    await db.collection('locks').insertOne({ _id: 'l2', owner: 'dead', until: new Date(Date.now() + 150) } as never);
    const started = Date.now();
    expect(await withLock(db, 'l2', async () => 'ran', { waitMs: 2_000 })).toBe('ran');
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(await db.collection('locks').countDocuments({ _id: 'l2' } as never)).toBe(0);
  });

  it('a caller with the default wait outlasts the whole lease of a holder that died just after taking the lock: it takes it over and runs, never conflict', async () => {
    // What a SIGKILLed holder leaves: its lock, with the full lease it took a moment before dying.
    await db.collection('locks').insertOne({ _id: 'l4', owner: 'dead', until: new Date(Date.now() + LOCK_LEASE_MS) } as never);
    const ran = await withLock(db, 'l4', async () => 'ran').catch((e: unknown) => e);
    expect(ran).toBe('ran');
    expect(await db.collection('locks').countDocuments({ _id: 'l4' } as never)).toBe(0);
  }, LOCK_LEASE_MS + 10_000);

  it('releases the lock when the work fails', async () => {
    await expect(withLock(db, 'l3', async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(await withLock(db, 'l3', async () => 'again', { waitMs: 100 })).toBe('again');
  });
});
