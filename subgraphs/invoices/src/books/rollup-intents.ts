import { newId, REPAIR_AFTER_MS, retireMark, unmarked } from '@cuadra/shared';
import type { Connection, Model } from 'mongoose';
import { ALL_TIME, Grain, partyShard, partyShardId, pendingChanges, rollupId, rollups } from './rollup-store.ts';
import { rollupsByIds } from './rollup-reads.ts';
import { countPartyWrite, leaderChangesOf, updateLeaders } from './party-leaders.ts';

/**
 * One change to the receivables rollups, dated on the day it belongs to: `inc` goes to the
 * workspace total, `customer.inc` to that customer's counters (top_customers).
 */
export interface RollupDelta {
  day: string;
  currency: string;
  inc: Record<string, number>;
  customer?: { id: string; name: string; inc: Record<string, number> } | null;
  /**
   * A change of receivables on invoices due on `date`, dated `day`: kept by due date (day and
   * month documents, `e.<day>` counters), so aging at any position date reads rollups only.
   */
  due?: { date: string; amount: number } | null;
}

/**
 * A change intent: written on the document that changed, in the same conditional update as the
 * change itself (one document, one atomic write). It is then added to the rollups idempotently
 * and removed from the document. If the process dies in between, {@link repairPendingRollups}
 * finishes it later; applying an intent twice is a no-op (see RollupDoc.applied).
 */
export interface RollupIntent {
  id: string;
  at: Date;
  deltas: RollupDelta[];
}

/** Fields every document that feeds the rollups carries. */
export interface FeedsRollups {
  _id: string;
  workspace: string;
  pending_rollups: RollupIntent[];
  pending_count: number;
}

/** A new intent, or null when it changes nothing. */
export function rollupIntent(deltas: RollupDelta[], at: Date): RollupIntent | null {
  const nonZero = (inc: Record<string, number>) => Object.fromEntries(Object.entries(inc).filter(([, v]) => v !== 0));
  const kept = deltas
    .map((d) => ({ ...d, inc: nonZero(d.inc), customer: d.customer ? { ...d.customer, inc: nonZero(d.customer.inc) } : null }))
    .map((d) => ({ ...d, customer: d.customer && Object.keys(d.customer.inc).length ? d.customer : null, due: d.due && d.due.amount !== 0 ? d.due : null }))
    .filter((d) => Object.keys(d.inc).length > 0 || d.customer || d.due);
  return kept.length ? { id: newId('evt'), at, deltas: kept } : null;
}

/** The `$push`/`$inc` to merge into the document's own conditional update. */
export function intentUpdate(intent: RollupIntent | null): { $push?: Record<string, unknown>; $inc?: Record<string, number> } {
  return intent ? { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } } : {};
}

/**
 * Registers an intent before the write that carries it, so a repair can find it by a small
 * collection instead of scanning documents. A marker whose write never happened is simply
 * dropped by the repair.
 */
export async function markIntent(db: Connection, workspace: string, model: Model<any>, docId: string, intent: RollupIntent | null): Promise<void> {
  if (!intent) return;
  await pendingChanges(db).create({ _id: intent.id, workspace, kind: 'intent', collection: model.collection.collectionName, doc: docId, at: intent.at });
}

/** What one delta adds to one rollup document: the counters (`$inc` paths) and a customer's name to keep. */
export interface RollupChange {
  _id: string;
  currency: string;
  grain: Grain;
  period: string;
  inc: Record<string, number>;
  set?: Record<string, string>;
}

/**
 * The rollup documents one delta lands in and what it adds to each — the day, month and all-time
 * documents (and the due-date ones), plus the all-currency document counts (records totals). The
 * one definition {@link applyRollupIntent} writes and a bulk load (bench/scale.ts) sums.
 */
export function rollupChanges(workspace: string, delta: RollupDelta): RollupChange[] {
  const out: RollupChange[] = [];
  for (const [grain, period] of grainsOf(delta)) {
    const inc: Record<string, number> = {};
    if (grain === Grain.DueDay || grain === Grain.DueMonth) {
      inc[`e.${delta.day}`] = delta.due!.amount;
    } else {
      for (const [k, v] of Object.entries(delta.inc)) inc[`v.${k}`] = v;
    }
    if (Object.keys(inc).length > 0) out.push({ _id: rollupId(workspace, delta.currency, grain, period), currency: delta.currency, grain, period, inc });
    const party = delta.customer;
    if (party && keepsParties(grain) && Object.keys(party.inc).length > 0) {
      // The party's counters in its shard of the day or month, never in a document holding every party of it.
      out.push({
        _id: partyShardId(workspace, delta.currency, grain, period, partyShard(grain, party.id)), currency: delta.currency, grain, period,
        inc: Object.fromEntries(Object.entries(party.inc).map(([k, v]) => [`c.${party.id}.${k}`, v])), set: { [`n.${party.id}`]: party.name },
      });
    }
  }
  // Document counts of every currency together, for records totals.
  const counts = Object.entries(delta.inc).filter(([k]) => isCount(k));
  if (counts.length) out.push({ _id: rollupId(workspace, '*', Grain.AllTime, ALL_TIME), currency: '*', grain: Grain.AllTime, period: ALL_TIME, inc: Object.fromEntries(counts.map(([k, v]) => [`v.${k}`, v])) });
  return out;
}

/**
 * Whether a grain keeps per-party counters: days and months only (in their shards,
 * {@link partyShardId}), what a window's party totals (top_customers, top_vendors) read. The
 * all-time document kept every party too, though nothing read them there: at 90,000 customers ~9 MB
 * rewritten on every post and payment and read whole by every `as_of` metric (issue 33). All-time
 * documents written before keep theirs; nothing reads them.
 */
function keepsParties(grain: Grain): boolean {
  return grain === Grain.Day || grain === Grain.Month;
}

async function addToRollup(db: Connection, workspace: string, mark: string, change: RollupChange): Promise<void> {
  const update: Record<string, unknown> = {
    $inc: change.inc,
    $addToSet: { applied: mark },
    $setOnInsert: { workspace, currency: change.currency, grain: change.grain, period: change.period },
  };
  if (change.set) update.$set = change.set;
  try {
    // Neither in flight here nor finished lately (shared derived.ts: the marks' one rule, DONE_MARKS).
    await rollups(db).collection.updateOne({ _id: change._id, ...unmarked(mark) } as never, update as never, { upsert: true });
  } catch (err) {
    // The document exists and already holds this mark: the upsert's insert collides on _id.
    if ((err as { code?: number }).code !== 11000) throw err;
  }
}

/** Counters that are document counts: also kept across currencies (records totals). */
export function isCount(key: string): boolean {
  return key.startsWith('status_') || key === 'invoices' || key === 'credit_notes' || key === 'debit_notes' || key === 'payments';
}

/** The rollup documents one change lands in. */
function grainsOf(delta: RollupDelta): [Grain, string][] {
  const out: [Grain, string][] = [[Grain.Day, delta.day], [Grain.Month, delta.day.slice(0, 7)], [Grain.AllTime, ALL_TIME]];
  if (delta.due) out.push([Grain.DueDay, delta.due.date], [Grain.DueMonth, delta.due.date.slice(0, 7)]);
  return out;
}

/** Adds an intent to the rollups (idempotent), then marks it done on its document. */
export async function applyRollupIntent(db: Connection, model: Model<any>, docId: string, workspace: string, intent: RollupIntent | null): Promise<void> {
  if (!intent) return;
  // Each delta has its own mark (`<intent>#<n>`): two deltas of one intent may land on the same rollup.
  const touched: { id: string; mark: string }[] = [];
  for (const [n, delta] of intent.deltas.entries()) {
    const mark = `${intent.id}#${n}`;
    for (const change of rollupChanges(workspace, delta)) {
      await addToRollup(db, workspace, mark, change);
      touched.push({ id: change._id, mark });
    }
    // Then the leaders of the party's day and month (top-N reads): after its counters, before the intent is done.
    for (const lc of leaderChangesOf(workspace, delta.currency, delta.day, delta.customer)) await updateLeaders(db, lc);
    // Last, the count of changes of the party's month: top-N answers kept for windows over it are stale from here.
    await countPartyWrite(db, workspace, delta.currency, delta.day, delta.customer);
  }
  const done = await model.collection.updateOne(
    { _id: docId, 'pending_rollups.id': intent.id } as never,
    { $pull: { pending_rollups: { id: intent.id } }, $inc: { pending_count: -1 } } as never,
  );
  if (done.modifiedCount === 1) {
    // The document no longer lists the intent, so nobody reading it from now on applies it again;
    // one who read it before may still be about to: each mark moves, in one write, from `applied` to
    // the document's last finished ones (`done`), which refuse it as `applied` did (a stale applier's
    // double count in finance-faults: `collected` 6,100,000 for 60 payments of 100,000).
    for (const t of touched) await rollups(db).collection.updateOne({ _id: t.id } as never, retireMark(t.mark) as never);
  }
  await pendingChanges(db).deleteOne({ _id: intent.id });
}

/** How long an intent is left to the handler that wrote it before a repair takes it over: the one length of every repair (shared). */
export { REPAIR_AFTER_MS };

/**
 * Finishes intents left behind by a handler that died between its document write and its
 * rollup writes. Reads the pending-changes markers of the workspace (only what is in flight or
 * abandoned), so it costs next to nothing when all is well. Run by the modules' maintenance hooks (books/maintenance.ts), never by a read.
 */
export async function repairPendingRollups(db: Connection, workspace: string, models: readonly Model<any>[], now = new Date()): Promise<number> {
  const byName = new Map(models.map((m) => [m.collection.collectionName, m]));
  const stale = await pendingChanges(db).find({ workspace, kind: 'intent' }).limit(200).lean();
  let repaired = 0;
  for (const marker of stale) {
    if (now.getTime() - new Date(marker.at).getTime() < REPAIR_AFTER_MS) continue;
    const model = byName.get(marker.collection);
    if (!model) continue;
    const doc = await model.findById(marker.doc).lean<{ pending_rollups?: RollupIntent[] }>();
    const intent = doc?.pending_rollups?.find((i) => i.id === marker._id);
    if (intent) {
      await applyRollupIntent(db, model, marker.doc, workspace, intent);
      repaired++;
    } else {
      // The change it announced never happened (a lost race, a crash before the write) or is done.
      await pendingChanges(db).deleteOne({ _id: marker._id });
    }
  }
  return repaired;
}

/**
 * Whether the workspace has any change marker at all — in flight or left by a dead process (one
 * read). Usually none: a read that makes its numbers whole first then skips the repairs' reads
 * ({@link repairPendingRollups}, completeStuckPayments), which would have found nothing to do.
 */
export async function anyPendingChange(db: Connection, workspace: string): Promise<boolean> {
  return (await pendingChanges(db).exists({ workspace, kind: { $in: ['payment', 'intent'] } })) !== null;
}

/** The all-time, all-currency counters of a workspace (document counts by status, payments). */
export async function allTimeCounts(db: Connection, workspace: string): Promise<Record<string, number>> {
  // With the other rollup reads of this turn (a dashboard's metrics and lists ask at once).
  return (await rollupsByIds(db, [rollupId(workspace, '*', Grain.AllTime, ALL_TIME)]))[0]?.v ?? {};
}
