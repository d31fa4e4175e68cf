import { newId } from '@cuadra/shared';
import type { Connection, Model } from 'mongoose';
import { rollupId, rollups } from './models/rollup.ts';

/**
 * One change to the receivables rollups, dated on the day it belongs to: `inc` goes to the
 * workspace total, `customer.inc` to that customer's own rollup (top_customers).
 */
export interface RollupDelta {
  day: string;
  currency: string;
  inc: Record<string, number>;
  customer?: { id: string; name: string; inc: Record<string, number> } | null;
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
    .map((d) => ({ ...d, customer: d.customer && Object.keys(d.customer.inc).length ? d.customer : null }))
    .filter((d) => Object.keys(d.inc).length > 0 || d.customer);
  return kept.length ? { id: newId('evt'), at, deltas: kept } : null;
}

/** The `$push`/`$inc` to merge into the document's own conditional update. */
export function intentUpdate(intent: RollupIntent | null): { $push?: Record<string, unknown>; $inc?: Record<string, number> } {
  return intent ? { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } } : {};
}

async function addToRollup(db: Connection, workspace: string, intentId: string, grain: 'd' | 'm', period: string, currency: string, customer: string, name: string | null, inc: Record<string, number>) {
  const _id = rollupId(workspace, currency, grain, period, customer);
  const $inc = Object.fromEntries(Object.entries(inc).map(([k, v]) => [`v.${k}`, v]));
  const update: Record<string, unknown> = {
    $inc,
    $addToSet: { applied: intentId },
    $setOnInsert: { workspace, currency, grain, period, customer },
  };
  if (name !== null) update.$set = { name };
  try {
    await rollups(db).collection.updateOne({ _id, applied: { $ne: intentId } } as never, update as never, { upsert: true });
  } catch (err) {
    // The document exists and already holds this intent: the upsert's insert collides on _id.
    if ((err as { code?: number }).code !== 11000) throw err;
  }
}

/** Adds an intent to the rollups (idempotent), then marks it done on its document. */
export async function applyRollupIntent(db: Connection, model: Model<any>, docId: string, workspace: string, intent: RollupIntent | null): Promise<void> {
  if (!intent) return;
  // Each delta has its own mark (`<intent>#<n>`): two deltas of one intent may land on the same rollup.
  const touched: { grain: 'd' | 'm'; period: string; currency: string; customer: string; mark: string }[] = [];
  for (const [n, delta] of intent.deltas.entries()) {
    const mark = `${intent.id}#${n}`;
    for (const [grain, period] of [['d', delta.day], ['m', delta.day.slice(0, 7)]] as const) {
      if (Object.keys(delta.inc).length) {
        await addToRollup(db, workspace, mark, grain, period, delta.currency, '*', null, delta.inc);
        touched.push({ grain, period, currency: delta.currency, customer: '*', mark });
      }
      if (delta.customer) {
        await addToRollup(db, workspace, mark, grain, period, delta.currency, delta.customer.id, delta.customer.name, delta.customer.inc);
        touched.push({ grain, period, currency: delta.currency, customer: delta.customer.id, mark });
      }
    }
  }
  const done = await model.collection.updateOne(
    { _id: docId, 'pending_rollups.id': intent.id } as never,
    { $pull: { pending_rollups: { id: intent.id } }, $inc: { pending_count: -1 } } as never,
  );
  if (done.modifiedCount === 1) {
    // The document no longer lists the intent, so nobody will apply it again: forget its id.
    for (const t of touched) {
      await rollups(db).collection.updateOne({ _id: rollupId(workspace, t.currency, t.grain, t.period, t.customer) } as never, { $pull: { applied: t.mark } } as never);
    }
  }
}

/** How long an intent is left to the handler that wrote it before a repair takes it over. */
export const REPAIR_AFTER_MS = 60_000;

/**
 * Finishes intents left behind by a handler that died between its document write and its
 * rollup writes. Reads only documents with `pending_count > 0` (indexed), so it costs nothing
 * when all is well. Run before every metric read.
 */
export async function repairPendingRollups(db: Connection, workspace: string, models: readonly Model<any>[], now = new Date()): Promise<number> {
  let repaired = 0;
  for (const model of models) {
    const stuck = await model.find({ workspace, pending_count: { $gt: 0 } }).limit(100).lean<FeedsRollups[]>();
    for (const doc of stuck) {
      for (const intent of doc.pending_rollups) {
        if (now.getTime() - new Date(intent.at).getTime() < REPAIR_AFTER_MS) continue;
        await applyRollupIntent(db, model, doc._id, workspace, intent);
        repaired++;
      }
    }
  }
  return repaired;
}
