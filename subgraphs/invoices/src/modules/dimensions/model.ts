import { CuadraError, decodeCursor, encodeCursor, type ListAnswer } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * Dimensions (tag_dimensions) and their tags: the analytic axes journal lines are tagged on
 * (`{cost_center: 'ventas'}`), so profitability is read per tag from the ledger rollups.
 * `cost_center` (Centro de costo) exists in every workspace without being created, like the PUC
 * (it is data in code, {@link DEFAULT_DIMENSIONS}); a workspace adds its own (proyecto, sucursal…).
 * Both sets are bounded ({@link MAX_DIMENSIONS}, {@link MAX_TAGS_PER_DIMENSION}), so every read
 * of them is a bounded read of one workspace's documents.
 */
export const DIMENSION_KEY = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'Dimension key, e.g. cost_center, proyecto.' } as const;
export const TAG_KEY = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$', description: 'Tag key, e.g. ventas, bogota-norte.' } as const;
export const NAME = { type: 'string', minLength: 1, maxLength: 120 } as const;

/** Dimensions every workspace has. */
export const DEFAULT_DIMENSIONS: Record<string, string> = { cost_center: 'Centro de costo' };
/** Most dimensions a workspace adds (besides the defaults). */
export const MAX_DIMENSIONS = 20;
/** Most tags of one dimension. */
export const MAX_TAGS_PER_DIMENSION = 200;

export type TagStatus = 'active' | 'inactive';

/** A workspace's dimension, or its change to a default one (archived). `_id` `<workspace>|<key>`. */
export interface DimensionDoc {
  _id: string;
  workspace: string;
  key: string;
  name: string;
  default: boolean;
  status: TagStatus;
  created_at: Date;
  updated_at: Date;
}

/** A tag of a dimension. `_id` `<workspace>|<dimension>|<key>`: unique by construction. */
export interface TagDoc {
  _id: string;
  workspace: string;
  dimension: string;
  key: string;
  name: string;
  status: TagStatus;
  created_at: Date;
  updated_at: Date;
}

const dimensionSchema = new Schema<DimensionDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, key: { type: String, required: true }, name: { type: String, required: true },
  default: { type: Boolean, required: true }, status: { type: String, required: true }, created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
}, { versionKey: false });
dimensionSchema.index({ workspace: 1 });

const tagSchema = new Schema<TagDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, dimension: { type: String, required: true }, key: { type: String, required: true },
  name: { type: String, required: true }, status: { type: String, required: true }, created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
}, { versionKey: false });
tagSchema.index({ workspace: 1 });

/** The dimensions collection. */
export function tagDimensions(db: Connection): Model<DimensionDoc> {
  return (db.models.TagDimension as Model<DimensionDoc> | undefined) ?? db.model<DimensionDoc>('TagDimension', dimensionSchema, 'tag_dimensions');
}

/** The tags collection. */
export function tags(db: Connection): Model<TagDoc> {
  return (db.models.Tag as Model<TagDoc> | undefined) ?? db.model<TagDoc>('Tag', tagSchema, 'tags');
}

export const dimensionId = (workspace: string, key: string) => `${workspace}|${key}`;
export const tagId = (workspace: string, dimension: string, key: string) => `${workspace}|${dimension}|${key}`;

/** A dimension as tools answer it. */
export interface DimensionView { key: string; name: string; default: boolean; status: TagStatus }
export const DIMENSION_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['key', 'name', 'default', 'status'],
  properties: { key: { type: 'string' }, name: { type: 'string' }, default: { type: 'boolean' }, status: { enum: ['active', 'inactive'] } },
} as const;

/** A tag as tools answer it. */
export interface TagView { dimension: string; key: string; name: string; status: TagStatus }
export const TAG_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['dimension', 'key', 'name', 'status'],
  properties: { dimension: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' }, status: { enum: ['active', 'inactive'] } },
} as const;

export function tagView(t: TagDoc): TagView {
  return { dimension: t.dimension, key: t.key, name: t.name, status: t.status };
}

/** The workspace's dimensions (defaults with its changes, then its own), by key. Bounded. */
export async function allDimensions(db: Connection, workspace: string): Promise<DimensionView[]> {
  const docs = new Map((await tagDimensions(db).find({ workspace }).limit(MAX_DIMENSIONS + Object.keys(DEFAULT_DIMENSIONS).length).lean()).map((d) => [d.key, d]));
  const keys = [...new Set([...Object.keys(DEFAULT_DIMENSIONS), ...docs.keys()])].sort();
  return keys.map((key) => {
    const d = docs.get(key);
    const isDefault = Object.hasOwn(DEFAULT_DIMENSIONS, key);
    return { key, name: isDefault ? DEFAULT_DIMENSIONS[key] : d!.name, default: isDefault, status: d?.status ?? 'active' };
  });
}

/** One dimension of the workspace, or null. */
export async function findDimension(db: Connection, workspace: string, key: string): Promise<DimensionView | null> {
  const d = await tagDimensions(db).findById(dimensionId(workspace, key)).lean();
  if (Object.hasOwn(DEFAULT_DIMENSIONS, key)) return { key, name: DEFAULT_DIMENSIONS[key], default: true, status: d?.status ?? 'active' };
  return d ? { key, name: d.name, default: false, status: d.status } : null;
}

/** The filters of a page of dimensions or tags. */
export interface TagFilter { dimension?: string; status?: string; search?: string }

function matches(f: TagFilter) {
  const needle = f.search?.toLowerCase();
  return (r: { key: string; name: string; status: string; dimension?: string }) => (!f.status || r.status === f.status)
    && (!f.dimension || r.dimension === f.dimension)
    && (!needle || r.key.includes(needle) || r.name.toLowerCase().includes(needle));
}

/** A page of a bounded, ordered list: the cursor carries the offset of the next row. */
function page<R>(series: string, workspace: string, all: R[], limit: number, cursor: string | undefined, filtered: boolean): ListAnswer<R> {
  const start = cursor ? decodeCursor(series, workspace, cursor) - 1 : 0;
  const rows = all.slice(start, start + limit);
  const out: ListAnswer<R> = { rows };
  if (!filtered) out.total = all.length;
  if (start + limit < all.length) out.next_cursor = encodeCursor(series, workspace, start + limit + 1);
  return out;
}

/** One page of the workspace's dimensions in key order. */
export async function dimensionsPage(db: Connection, workspace: string, f: TagFilter, limit: number, cursor?: string): Promise<ListAnswer<DimensionView>> {
  const filtered = Boolean(f.status || f.search);
  return page('tag_dimensions', workspace, (await allDimensions(db, workspace)).filter(matches(f)), limit, cursor, filtered);
}

/** One page of the workspace's tags in (dimension, key) order. */
export async function tagsPage(db: Connection, workspace: string, f: TagFilter, limit: number, cursor?: string): Promise<ListAnswer<TagView>> {
  const filter: Record<string, unknown> = { workspace };
  if (f.dimension) filter.dimension = f.dimension;
  const docs = await tags(db).find(filter).limit(MAX_TAGS_PER_DIMENSION * (MAX_DIMENSIONS + Object.keys(DEFAULT_DIMENSIONS).length)).lean();
  const all = docs.map(tagView).filter(matches(f)).sort((a, b) => (a.dimension === b.dimension ? (a.key < b.key ? -1 : 1) : a.dimension < b.dimension ? -1 : 1));
  return page('tags', workspace, all, limit, cursor, Boolean(f.status || f.search || f.dimension));
}

/**
 * Checks a line's tags: every key an active dimension of the workspace, every value an active tag
 * of it. Refused `invalid_input` at `<field>/<dimension>`.
 */
export async function checkTags(db: Connection, workspace: string, lineTags: Record<string, string> | undefined, field: string): Promise<void> {
  for (const [dim, tag] of Object.entries(lineTags ?? {})) {
    const d = await findDimension(db, workspace, dim);
    if (!d) throw new CuadraError('invalid_input', `There is no dimension "${dim}" in this workspace; create it with dimensions.create.`, { field: `${field}/${dim}` });
    if (d.status !== 'active') throw new CuadraError('invalid_input', `The dimension "${dim}" is archived; lines are no longer tagged on it.`, { field: `${field}/${dim}` });
    const t = await tags(db).findById(tagId(workspace, dim, tag)).lean();
    if (!t) throw new CuadraError('invalid_input', `There is no tag "${tag}" in the dimension ${dim}; create it with dimensions.create_tag.`, { field: `${field}/${dim}` });
    if (t.status !== 'active') throw new CuadraError('invalid_input', `The tag "${tag}" of ${dim} is archived; lines are no longer tagged with it.`, { field: `${field}/${dim}` });
  }
}

/** JSON Schema of a line's tags as callers write them: `{dimension key: tag key}`. */
export const LINE_TAGS_SCHEMA = {
  type: 'object', maxProperties: 8, propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' },
  additionalProperties: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$' },
  description: 'Dimension tags of the line, {dimension key: tag key}, e.g. {"cost_center": "ventas"}; each an active tag (dimensions.create_tag).',
} as const;
