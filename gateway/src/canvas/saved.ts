import { CuadraError, DATE_TIME_SCHEMA as DATE_TIME, decodeCursor, encodeCursor, ensureModel, type ListAnswer, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { metricQuerySchema, SAVED_METRIC, type MetricQuery } from './schema.ts';

/**
 * A workspace's saved metric: a metric query under a key, so a block's `metric: "saved:<key>"`
 * reads it (specification §2.3). One document per key, `_id` `<workspace>|<key>`: unique per
 * workspace by construction and read by `_id`, sealed to its workspace.
 */
export interface SavedMetricDoc {
  _id: string;
  workspace: string;
  key: string;
  query: MetricQuery;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const savedSchema = new Schema<SavedMetricDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    key: { type: String, required: true },
    query: { type: Schema.Types.Mixed, required: true },
    version: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
savedSchema.index({ workspace: 1 });

/** The key of a saved metric: what follows `saved:` in a metric name (specification §2.3 pattern). */
export const SAVED_KEY_SCHEMA = { type: 'string', pattern: SAVED_METRIC.replace('^saved:', '^'), description: 'Lower case letters, digits, _ and - (1–64), first not -.' } as const;

/** Most saved metrics a workspace keeps: bounds every list of them. */
export const MAX_SAVED_METRICS = 200;

/** JSON Schema of {@link savedMetricView}. */
export const SAVED_METRIC_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['key', 'metric', 'query', 'version', 'created_at', 'updated_at'],
  properties: {
    key: { type: 'string' }, metric: { type: 'string', pattern: SAVED_METRIC }, query: metricQuerySchema,
    version: { type: 'integer', minimum: 1 }, created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** What callers see of a saved metric: `metric` is the name blocks use. */
export function savedMetricView(d: SavedMetricDoc) {
  return { key: d.key, metric: `saved:${d.key}`, query: d.query, version: d.version, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString() };
}

/** The window fields of a metric query: a caller's window replaces the saved one whole. */
const WINDOW_FIELDS = ['days', 'from', 'to'] as const;

/**
 * The query a `saved:<key>` read runs: the saved query, with the caller's other fields (a
 * block's inputs: from/to, days, interval, limit, dimension_key, horizon…) laid over it; a caller's
 * window (days, or from/to) replaces the saved window.
 */
export function resolveSaved(saved: MetricQuery, asked: MetricQuery): MetricQuery {
  const { metric: _named, ...overrides } = asked;
  const base: Record<string, unknown> = { ...saved };
  if (WINDOW_FIELDS.some((f) => overrides[f] !== undefined)) for (const f of WINDOW_FIELDS) delete base[f];
  return { ...base, ...overrides, metric: saved.metric } as MetricQuery;
}

/** Saved metrics per workspace. */
export class SavedMetricStore {
  readonly model: Model<SavedMetricDoc>;
  constructor(db: Connection) {
    this.model = modelOn(db, 'SavedMetric', savedSchema, 'saved_metrics');
  }

  async init(): Promise<void> {
    await ensureModel(this.model);
  }

  /** Creates or replaces the saved metric of `key` (one upsert by `_id`). */
  async save(workspace: string, key: string, query: MetricQuery, now: Date): Promise<{ doc: SavedMetricDoc; created: boolean }> {
    if (query.metric.startsWith('saved:')) throw new CuadraError('invalid_input', 'A saved metric names one of the specification\'s metrics, not another saved metric.', { field: '/query/metric' });
    const _id = `${workspace}|${key}`;
    const exists = await this.model.exists({ _id });
    if (!exists && await this.model.countDocuments({ workspace }) >= MAX_SAVED_METRICS) {
      throw new CuadraError('conflict', `This workspace already keeps ${MAX_SAVED_METRICS} saved metrics, the most it may; delete one first.`);
    }
    const doc = await this.model.findOneAndUpdate(
      { _id, workspace },
      { $set: { query, updated_at: now }, $inc: { version: 1 }, $setOnInsert: { key, created_at: now } },
      { upsert: true, returnDocument: 'after' },
    ).lean<SavedMetricDoc>().catch(async (err: { code?: number }) => {
      // Two first saves of one key at once: the other created it; this one replaces it.
      if (err.code !== 11000) throw err;
      return this.model.findOneAndUpdate({ _id, workspace }, { $set: { query, updated_at: now }, $inc: { version: 1 } }, { returnDocument: 'after' }).lean<SavedMetricDoc>();
    });
    return { doc: doc!, created: doc!.version === 1 };
  }

  async get(workspace: string, key: string): Promise<SavedMetricDoc | null> {
    return this.model.findOne({ _id: `${workspace}|${key}`, workspace }).lean<SavedMetricDoc>();
  }

  /** One page in key order; the cursor carries the offset (the set is bounded by {@link MAX_SAVED_METRICS}). */
  async list(workspace: string, page: { limit: number; cursor?: string }): Promise<ListAnswer<ReturnType<typeof savedMetricView>>> {
    const all = (await this.model.find({ workspace }).limit(MAX_SAVED_METRICS + 1).lean<SavedMetricDoc[]>()).sort((a, b) => (a.key < b.key ? -1 : 1));
    const start = page.cursor ? decodeCursor('saved_metrics', workspace, page.cursor) - 1 : 0;
    const out: ListAnswer<ReturnType<typeof savedMetricView>> = { rows: all.slice(start, start + page.limit).map(savedMetricView), total: all.length };
    if (start + page.limit < all.length) out.next_cursor = encodeCursor('saved_metrics', workspace, start + page.limit + 1);
    return out;
  }

  async remove(workspace: string, key: string): Promise<boolean> {
    return (await this.model.deleteOne({ _id: `${workspace}|${key}`, workspace })).deletedCount === 1;
  }
}
