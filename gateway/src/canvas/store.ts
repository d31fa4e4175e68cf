import {
  addPositions, backfillPositions, createPositioned, DATE_TIME_SCHEMA as DATE_TIME, ensureModel, type ListAnswer, listNewestFirst, modelOn, newId, releasePosition, repositionDocument,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { SavedMetricStore } from './saved.ts';
import { BLOCK_TYPES, type Block } from './schema.ts';

/** A stored dashboard: one document per dashboard, in the gateway's database, sealed to its workspace. */
export interface DashboardDoc {
  _id: string;
  workspace: string;
  title: string;
  key: string | null;
  /** The workspace-unique handle: the key when given, else the id (a unique index cannot hold many nulls here). */
  handle: string;
  blocks: Block[];
  version: number;
  created_at: Date;
  updated_at: Date;
}

const dashboardSchema = new Schema<DashboardDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    title: { type: String, required: true },
    key: { type: String, default: null },
    handle: { type: String, required: true },
    // The block tree is validated by the canvas schema before it is stored; Mixed keeps it verbatim.
    blocks: { type: Schema.Types.Mixed, required: true },
    version: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
dashboardSchema.index({ workspace: 1, handle: 1 }, { unique: true });
dashboardSchema.index({ workspace: 1, updated_at: -1 });
// Listed most recently changed first by position: a save or patch moves the dashboard to the newest one.
addPositions(dashboardSchema);


/**
 * A block of a stored tree, in an output schema: checked against the canvas block schema when it
 * was saved, kept verbatim. Its type is named here; the rest (a tree of any depth) is open, since
 * output schemas carry no `$ref` to the block schema.
 */
export const STORED_BLOCK_SCHEMA = { type: 'object', required: ['type'], properties: { type: { enum: [...BLOCK_TYPES] } } } as const;

/** The fields of a dashboard every view gives (`dashboards.list` rows: these alone). */
const DASHBOARD_FIELDS = {
  id: { type: 'string', pattern: '^dsh_' },
  key: { type: ['string', 'null'] },
  title: { type: 'string' },
  version: { type: 'integer', minimum: 1 },
  created_at: DATE_TIME,
  updated_at: DATE_TIME,
} as const;

/** JSON Schema of a `dashboards.list` row: a dashboard without its blocks. */
export const DASHBOARD_SUMMARY_SCHEMA = {
  type: 'object', additionalProperties: false, required: Object.keys(DASHBOARD_FIELDS), properties: DASHBOARD_FIELDS,
} as const;

/** JSON Schema of {@link dashboardView}. */
export const DASHBOARD_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'key', 'title', 'blocks', 'version', 'created_at', 'updated_at'],
  properties: { ...DASHBOARD_FIELDS, blocks: { type: 'array', items: STORED_BLOCK_SCHEMA } },
} as const;

/** What callers see of a dashboard. */
export function dashboardView(doc: DashboardDoc): Record<string, unknown> {
  return { id: doc._id, key: doc.key, title: doc.title, blocks: doc.blocks, version: doc.version, created_at: doc.created_at.toISOString(), updated_at: doc.updated_at.toISOString() };
}

/** Dashboards per workspace. */
export class DashboardStore {
  readonly model: Model<DashboardDoc>;
  /** The workspace's saved metrics (`saved:<key>` in blocks), kept next to the dashboards that use them. */
  readonly saved: SavedMetricStore;
  constructor(db: Connection) {
    this.model = modelOn(db, 'Dashboard', dashboardSchema, 'dashboards');
    this.saved = new SavedMetricStore(db);
  }

  async init(): Promise<void> {
    await ensureModel(this.model);
    await backfillPositions(this.model);
    await this.saved.init();
  }

  /** Creates a dashboard, or replaces the one with the same key (a save by key is idempotent by design). */
  async save(workspace: string, input: { title: string; key?: string; blocks: Block[] }, now: Date): Promise<{ doc: DashboardDoc; created: boolean }> {
    if (input.key) {
      const replaced = await this.model.findOneAndUpdate(
        { workspace, handle: input.key },
        { $set: { title: input.title, blocks: input.blocks, updated_at: now }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      ).lean<DashboardDoc>();
      if (replaced) {
        await repositionDocument(this.model, replaced._id, workspace);
        return { doc: replaced, created: false };
      }
    }
    const id = newId('dsh');
    const doc: DashboardDoc = { _id: id, workspace, title: input.title, key: input.key ?? null, handle: input.key ?? id, blocks: input.blocks, version: 1, created_at: now, updated_at: now };
    try {
      await createPositioned(this.model, doc);
    } catch (err) {
      // Two saves of one new key at once: the unique index lets one create; the other replaces it.
      if ((err as { code?: number }).code === 11000 && input.key) return this.save(workspace, input, now);
      throw err;
    }
    return { doc, created: true };
  }

  /** By id, or by key. */
  async get(workspace: string, idOrKey: string): Promise<DashboardDoc | null> {
    return this.model.findOne({ workspace, $or: [{ _id: idOrKey }, { handle: idOrKey }] }).lean<DashboardDoc>();
  }

  /** A dashboard by id in any workspace (the page checks the viewer's membership itself). */
  async byId(id: string): Promise<DashboardDoc | null> {
    return this.model.findOne({ _id: id }).lean<DashboardDoc>();
  }

  async patch(workspace: string, id: string, set: { title?: string; blocks?: Block[] }, now: Date): Promise<DashboardDoc | null> {
    const doc = await this.model.findOneAndUpdate({ workspace, _id: id }, { $set: { ...set, updated_at: now }, $inc: { version: 1 } }, { returnDocument: 'after' }).lean<DashboardDoc>();
    if (doc) await repositionDocument(this.model, doc._id, workspace);
    return doc;
  }

  /** One page, most recently changed first (bounded: positions, never a sort of the collection). */
  async list<R>(workspace: string, page: { limit: number; cursor?: string }, view: (doc: DashboardDoc) => R): Promise<ListAnswer<R>> {
    return listNewestFirst<DashboardDoc, R>(this.model, { workspace, limit: page.limit, cursor: page.cursor }, view);
  }

  async remove(workspace: string, id: string): Promise<boolean> {
    const gone = (await this.model.deleteOne({ workspace, _id: id })).deletedCount === 1;
    if (gone) await releasePosition(this.model.db, this.model.collection.collectionName, workspace);
    return gone;
  }
}
