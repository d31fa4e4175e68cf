import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { CuadraError } from './errors.ts';
import { declareDerivedCollection } from './governance/runs.ts';

interface LockDoc { _id: string; owner: string; until: Date }

// A lock orders callers and changes no data: taking or releasing one is not an action's effect, so
// a call that died holding only a lock provably did nothing (runs.ts; its key goes back to its retry).
declareDerivedCollection('locks');

/** How long a lock may be held before another caller may take it (a holder that died). */
export const LOCK_LEASE_MS = 15_000;
/**
 * How long a caller waits for a lock before it is refused with `conflict`: longer than a lease, so a
 * caller never gives up on a holder that died (SIGKILLed with the lock: nothing releases it) before
 * that holder's lease is over — it takes the lock over and runs. Shorter (10 s against a 15 s
 * lease), every call of the record in the first ~5 s after a restart waited on the dead holder and
 * was refused `conflict` "still running" (finance-faults under load, a fresh payments.register).
 * Refused only when live holders keep it past the wait, which is then true.
 */
export const LOCK_WAIT_MS = LOCK_LEASE_MS + 2_000;

function isDuplicate(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}

/**
 * Runs `fn` while holding the named lock of this service's database, so calls that would
 * otherwise race on one record (ten payments of one invoice at once) run one after another
 * and each answers what it would have answered alone. Taking the lock is one insert on a
 * unique `_id` (atomic on every MongoDB-protocol server); a holder that died is replaced once
 * its lease is over. The lock only orders callers: correctness of the data still rests on the
 * conditional updates inside `fn`, so a lease that ran out early can never double anything.
 */
export async function withLock<T>(db: Connection, name: string, fn: () => Promise<T>, options: { leaseMs?: number; waitMs?: number } = {}): Promise<T> {
  const leaseMs = options.leaseMs ?? LOCK_LEASE_MS;
  const deadline = Date.now() + (options.waitMs ?? LOCK_WAIT_MS);
  const locks = db.collection<LockDoc>('locks');
  const owner = randomBytes(12).toString('base64url');
  for (let attempt = 0; ; attempt++) {
    const now = new Date();
    try {
      await locks.insertOne({ _id: name, owner, until: new Date(now.getTime() + leaseMs) });
      break;
    } catch (err) {
      if (!isDuplicate(err)) throw err;
    }
    const taken = await locks.findOneAndUpdate({ _id: name, until: { $lt: now } }, { $set: { owner, until: new Date(now.getTime() + leaseMs) } });
    if (taken) break;
    if (Date.now() >= deadline) throw new CuadraError('conflict', 'Another call on the same record is still running; nothing was done. Retry in a moment.');
    await new Promise((r) => setTimeout(r, Math.min(10 * 2 ** Math.min(attempt, 4), 100) + Math.random() * 10));
  }
  try {
    return await fn();
  } finally {
    await locks.deleteOne({ _id: name, owner }).catch(() => undefined);
  }
}
