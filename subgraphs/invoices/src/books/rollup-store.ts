import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * A per-workspace rollup of receivables: one document per (currency, grain, period). `grain` is
 * `d` (period `YYYY-MM-DD`), `m` (`YYYY-MM`) or `a` (all time, period `all`). Counters live under
 * `v` (workspace totals) and, in day and month documents only, `c.<customer id>` (per customer, for
 * top_customers), with the customer's last known name under `n.<customer id>`; they only ever
 * change by `$inc`.
 * Metrics read these by `_id` (`_id: {$in: [...]}`), never the invoices (INFRA.md): the
 * MongoDB-protocol server here serves `_id` lookups from its index but scans for ranges.
 */
export interface RollupDoc {
  _id: string;
  workspace: string;
  currency: string;
  /** `due`/`duem`: receivables by due day/month, with `e.<day>` = the change dated that day. */
  grain: 'd' | 'm' | 'a' | 'due' | 'duem';
  period: string;
  v: Record<string, number>;
  e?: Record<string, number>;
  c: Record<string, Record<string, number>>;
  n: Record<string, string>;
  /**
   * Marks of the change deltas already added here. A delta is added with
   * `{_id, applied: {$ne: mark}}` + `$inc` + `$addToSet`, so adding it twice is a no-op; the
   * mark is pulled again once the owning document has marked its intent done.
   */
  applied: string[];
}

const rollupSchema = new Schema<RollupDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    currency: { type: String, required: true },
    grain: { type: String, required: true },
    period: { type: String, required: true },
    v: { type: Schema.Types.Mixed, default: {} },
    c: { type: Schema.Types.Mixed, default: {} },
    n: { type: Schema.Types.Mixed, default: {} },
    e: { type: Schema.Types.Mixed, default: undefined },
    applied: { type: [String], default: [] },
  },
  { versionKey: false, minimize: false },
);

/** The rollups collection. */
export function rollups(db: Connection): Model<RollupDoc> {
  return modelOn<RollupDoc>(db, 'Rollup', rollupSchema, 'rollups');
}

/** Id of a rollup document. */
export function rollupId(workspace: string, currency: string, grain: 'd' | 'm' | 'a' | 'due' | 'duem', period: string): string {
  return `${workspace}|${currency}|${grain}|${period}`;
}

/**
 * A change whose rollup intent is not yet known to be applied: written before the change, removed
 * once its intent is applied (or found never to have happened). The collection holds only what
 * is in flight or was left by a dead process, so the repair reads a handful of documents.
 */
export interface PendingDoc {
  _id: string;
  workspace: string;
  /** `intent`: a rollup intent on a document of `collection`; `payment`: a payment to complete. */
  kind: 'intent' | 'payment';
  collection: string;
  doc: string;
  at: Date;
}

const pendingSchema = new Schema<PendingDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    kind: { type: String, required: true },
    collection: { type: String, required: true },
    doc: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false, suppressReservedKeysWarning: true },
);
pendingSchema.index({ workspace: 1 });

/** The pending-changes collection. */
export function pendingChanges(db: Connection): Model<PendingDoc> {
  return modelOn<PendingDoc>(db, 'PendingChange', pendingSchema, 'pending_changes');
}
