import { Schema, type Connection, type Model } from 'mongoose';

/**
 * A per-workspace rollup of receivables: one document per (currency, grain, period, customer).
 * `grain` is `d` (period `YYYY-MM-DD`) or `m` (period `YYYY-MM`); `customer` is `*` for the
 * workspace total. Metrics read these, never the invoices themselves (INFRA.md). Counters live
 * under `v` and only ever change by `$inc`.
 */
export interface RollupDoc {
  _id: string;
  workspace: string;
  currency: string;
  grain: 'd' | 'm';
  period: string;
  customer: string;
  /** Last known customer name (customer rollups), for top_customers rows. */
  name: string | null;
  v: Record<string, number>;
  /**
   * Ids of the change intents already added here. An intent is added with
   * `{_id, applied: {$ne: id}}` + `$inc` + `$addToSet`, so applying it twice is a no-op; the id
   * is pulled again once the owning document has marked the intent done.
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
    customer: { type: String, required: true },
    name: { type: String, default: null },
    v: { type: Schema.Types.Mixed, default: {} },
    applied: { type: [String], default: [] },
  },
  { versionKey: false, minimize: false },
);
rollupSchema.index({ workspace: 1, currency: 1, grain: 1, customer: 1, period: 1 });

/** The rollups collection. */
export function rollups(db: Connection): Model<RollupDoc> {
  return (db.models.Rollup as Model<RollupDoc> | undefined) ?? db.model<RollupDoc>('Rollup', rollupSchema, 'rollups');
}

/** Id of a rollup document. */
export function rollupId(workspace: string, currency: string, grain: 'd' | 'm', period: string, customer: string): string {
  return `${workspace}|${currency}|${grain}|${period}|${customer}`;
}
