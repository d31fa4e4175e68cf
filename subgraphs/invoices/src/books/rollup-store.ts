import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The grain of a rollup: the span one rollup document counts, stored in its `grain` and in its `_id`
 * (the short stored values are kept: renaming them would need a migration of every rollup).
 */
export const Grain = {
  /** One calendar day: period `YYYY-MM-DD`. */
  Day: 'd',
  /** One calendar month: period `YYYY-MM`. */
  Month: 'm',
  /** All time: period {@link ALL_TIME}. */
  AllTime: 'a',
  /** Receivables by due day: period `YYYY-MM-DD`, with `e.<day>` = the change dated that day. */
  DueDay: 'due',
  /** Receivables by due month: period `YYYY-MM` (the months after the aging's daily window). */
  DueMonth: 'duem',
} as const;
/** One of {@link Grain}'s stored values. */
export type Grain = (typeof Grain)[keyof typeof Grain];

/** The period of the {@link Grain.AllTime} rollup. */
export const ALL_TIME = 'all';

/**
 * The per-account counters of the ledger in a rollup's `v`, by the stored key (kept: renaming would
 * need a migration): Σ debits `d<code>` and Σ credits `c<code>` of every entry; a year-end closing
 * entry also counts under `kd<code>`/`kc<code>`, so the income statement can leave the close out.
 */
export const LedgerCounter = {
  /** Σ debits to the account. */
  debit: (code: string): string => `d${code}`,
  /** Σ credits to the account. */
  credit: (code: string): string => `c${code}`,
  /** Σ debits to the account by closing entries. */
  closingDebit: (code: string): string => `kd${code}`,
  /** Σ credits to the account by closing entries. */
  closingCredit: (code: string): string => `kc${code}`,
  /** The account a debit or credit counter is of; null for any other counter. */
  accountOf: (key: string): string | null => (key[0] === 'd' || key[0] === 'c' ? key.slice(1) : null),
} as const;

/**
 * A per-workspace rollup of receivables: one document per (currency, grain, period). `grain` is a
 * {@link Grain}. Counters live under
 * `v` (workspace totals) and, for days and months only, `c.<customer id>` (per customer, for
 * top_customers), with the customer's last known name under `n.<customer id>` — in the shard
 * documents of the day or month ({@link partyShardId}; day and month documents written before the
 * shards hold theirs in themselves, still read); they only ever change by `$inc`.
 * Metrics read these by `_id` (`_id: {$in: [...]}`), never the invoices (INFRA.md): the
 * MongoDB-protocol server here serves `_id` lookups from its index but scans for ranges.
 */
export interface RollupDoc {
  _id: string;
  workspace: string;
  currency: string;
  grain: Grain;
  period: string;
  v: Record<string, number>;
  e?: Record<string, number>;
  c: Record<string, Record<string, number>>;
  n: Record<string, string>;
  /**
   * Marks of the change deltas already added here. A delta is added with
   * `{_id, applied: {$ne: mark}}` + `$inc` + `$addToSet`, so adding it twice is a no-op; the
   * mark is pulled again once the owning document has marked its intent done — moved, in the same
   * write, to `done`.
   */
  applied: string[];
  /**
   * Marks of the last changes finished here (at most DONE_MARKS, shared derived.ts), newest
   * last: an applier that read an intent before another finished it is refused by these as by
   * `applied`, so a change counts once even then.
   */
  done?: string[];
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
export function rollupId(workspace: string, currency: string, grain: Grain, period: string): string {
  return `${workspace}|${currency}|${grain}|${period}`;
}

/**
 * How many documents a day's and a month's per-party counters are spread over. In one document a
 * month held every customer of the month — ~1 MB at 8,000 customers, and one `$inc` there cost
 * 391 ms against 21 ms at 100 on the H2-backed store (issue 33), paid by every post and payment —
 * so each party's counters live in one of these shards, by a hash of its id: a write rewrites
 * ~1/64 of the month's parties; party totals read every shard of their days and months, by `_id`.
 */
export const PARTY_SHARDS: Partial<Record<Grain, number>> = { [Grain.Day]: 8, [Grain.Month]: 64 };

/** The shard of a day's or month's per-party counters that holds `party` (FNV-1a of its id). */
export function partyShard(grain: Grain, party: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < party.length; i++) h = Math.imul(h ^ party.charCodeAt(i), 0x01000193);
  return (h >>> 0) % (PARTY_SHARDS[grain] ?? 1);
}

/** Id of shard `shard` of the per-party counters of a day or month: `<rollup id>|p<shard>`. */
export function partyShardId(workspace: string, currency: string, grain: Grain, period: string, shard: number): string {
  return `${rollupId(workspace, currency, grain, period)}|p${shard}`;
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
