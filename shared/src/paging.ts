import { createHmac } from 'node:crypto';
import type { Connection, Model, Schema } from 'mongoose';
import { CuadraError } from './errors.ts';

/**
 * Bounded lists (CONTRACT §9): newest-first pages read by indexed EQUALITY, never by a sort,
 * a skip or a count over the collection.
 *
 * Why this shape: the MongoDB-protocol server we run on (mongo-java-server) sorts in memory and
 * scans for range queries; only equality lookups on an index stay fast whatever the size. So each
 * listed document carries `pos` — its place in its series (one series per collection, or per
 * collection and kind, per workspace), strictly increasing in creation order — and
 * `pos_bucket = floor(pos / 64)`. A page reads bucket after bucket downwards by
 * `{workspace, pos_bucket}` (an indexed equality), orders each bucket's ≤ 64 documents in memory
 * and stops when the page is full. The last position handed out (`seq`) and the number of
 * documents that exist (`live`) are kept on write in the service's `list_counters` collection, so a
 * list never counts. The same code runs unchanged on MongoDB.
 */

/** Positions per bucket. */
export const POS_BUCKET_SIZE = 64;
/** Buckets read at most for one page by default: ≤ ~1,000 documents, whatever the filter. */
export const DEFAULT_MAX_BUCKETS = 16;

/** The fields every listed document gets. */
export interface Positioned {
  /** Place in its series, from 1, strictly increasing in creation order (holes allowed). */
  pos: number;
  /** `floor(pos / 64)`: the unit a page reads by equality. */
  pos_bucket: number;
}

/** A counter of one series in one workspace: `_id` = `<series>:<workspace>`. */
interface CounterDoc {
  _id: string;
  /** Positions handed out so far (the last `pos`). */
  seq: number;
  /** Documents of the series that currently exist. */
  live: number;
}

/** A listed collection of a subgraph: its model and, when it holds several series, which one. */
export interface ListedSeries extends SeriesOptions {
  model: (db: Connection) => Model<any>;
}

/** Which documents form one series: the counter's name and the equality fields besides `workspace`. */
export interface SeriesOptions {
  /** Name of the series' counter; defaults to the model's collection name. */
  series?: string;
  /** Equality fields that, with `workspace`, select the series' documents (e.g. `{kind: 'quote'}`). */
  scope?: Record<string, string>;
}

/** Not `counters`: the invoices service already numbers documents in a collection of that name. */
const COUNTERS_COLLECTION = 'list_counters';

function counters(db: Connection) {
  return db.collection<CounterDoc>(COUNTERS_COLLECTION);
}

function counterId(series: string, workspace: string): string {
  return `${series}:${workspace}`;
}

function seriesOf(model: Model<any>, options: SeriesOptions): string {
  return options.series ?? model.collection.collectionName;
}

/**
 * Adds `pos` and `pos_bucket` to a listed model's schema and the index pages read by:
 * `{workspace, …scope fields, pos_bucket}`.
 */
export function addPositions(schema: Schema<any>, scopeFields: readonly string[] = []): void {
  schema.add({ pos: { type: Number }, pos_bucket: { type: Number } });
  const index: Record<string, 1> = { workspace: 1 };
  for (const f of scopeFields) index[f] = 1;
  index.pos_bucket = 1;
  schema.index(index);
}

/**
 * Takes the next position of a series in a workspace and counts the document as live. Put the
 * answer into the document before inserting it; if the insert fails, {@link releasePosition}
 * (the position stays a hole, which pages skip).
 *
 * A compare-and-set on the counter (`{_id, seq: s}` → `seq: s + 1`), retried when another writer
 * got there first. Not `findOneAndUpdate({$inc}, {returnDocument: 'after'})`: mongo-java-server
 * applies concurrent `$inc`s atomically but may answer a document that already carries another
 * writer's increment (50 concurrent calls answered 49 distinct values), so two documents would
 * share a position. A conditional update applies exactly once there, as on MongoDB.
 */
export async function assignPosition(db: Connection, series: string, workspace: string): Promise<Positioned> {
  const _id = counterId(series, workspace);
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const current = await counters(db).findOne({ _id });
    if (!current) {
      await counters(db).insertOne({ _id, seq: 0, live: 0 }).catch((err: { code?: number }) => {
        if (err.code !== 11000) throw err; // another writer created it: fine
      });
      continue;
    }
    const taken = await counters(db).updateOne({ _id, seq: current.seq }, { $inc: { seq: 1, live: 1 } });
    if (taken.modifiedCount === 1) {
      const pos = current.seq + 1;
      return { pos, pos_bucket: Math.floor(pos / POS_BUCKET_SIZE) };
    }
    if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
  }
  throw new Error(`counter ${_id}: no position after 1,000 attempts`);
}

/** Takes `count` consecutive positions without counting them live (backfill); answers the first. */
async function reservePositions(db: Connection, series: string, workspace: string, count: number): Promise<number> {
  const _id = counterId(series, workspace);
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const current = await counters(db).findOne({ _id });
    if (!current) {
      await counters(db).insertOne({ _id, seq: 0, live: 0 }).catch((err: { code?: number }) => {
        if (err.code !== 11000) throw err;
      });
      continue;
    }
    const taken = await counters(db).updateOne({ _id, seq: current.seq }, { $inc: { seq: count } });
    if (taken.modifiedCount === 1) return current.seq + 1;
    await new Promise((r) => setTimeout(r, Math.random() * 20));
  }
  throw new Error(`counter ${_id}: no block of positions after 1,000 attempts`);
}

/** Counts one document of a series as gone (a delete, or an insert that failed after {@link assignPosition}). */
export async function releasePosition(db: Connection, series: string, workspace: string): Promise<void> {
  await counters(db).updateOne({ _id: counterId(series, workspace) }, { $inc: { live: -1 } });
}

/**
 * Inserts a listed document with its position: assigns it, creates the document, and gives the
 * live count back when the insert fails (a duplicate key, say) before rethrowing.
 */
export async function createPositioned<T extends { workspace: string }>(model: Model<T>, doc: T, options: SeriesOptions = {}): Promise<T & Positioned> {
  const series = seriesOf(model, options);
  const positioned = { ...doc, ...(await assignPosition(model.db, series, doc.workspace)) };
  try {
    await model.create(positioned);
  } catch (err) {
    await releasePosition(model.db, series, doc.workspace).catch(() => undefined);
    throw err;
  }
  return positioned;
}

/** The documents of a series that exist now, from its counter (0 when it has none). */
export async function countFromCounter(db: Connection, series: string, workspace: string): Promise<number> {
  const c = await counters(db).findOne({ _id: counterId(series, workspace) });
  return Math.max(c?.live ?? 0, 0);
}

// ---------------------------------------------------------------------------------------------
// Cursors

const cursorKey = process.env.CUADRA_CURSOR_KEY ?? 'cuadra-list-cursor-v1';

function cursorMac(series: string, workspace: string, body: string): string {
  return createHmac('sha256', cursorKey).update(`${series}\n${workspace}\n${body}`).digest('base64url').slice(0, 22);
}

/** An opaque cursor: continue below position `pos` of this series in this workspace. */
export function encodeCursor(series: string, workspace: string, pos: number): string {
  const body = Buffer.from(JSON.stringify({ p: pos })).toString('base64url');
  return `${body}.${cursorMac(series, workspace, body)}`;
}

/** The position a cursor continues below; `invalid_input` at `/cursor` for anything this series did not give out. */
export function decodeCursor(series: string, workspace: string, cursor: string): number {
  const refuse = () => new CuadraError('invalid_input', 'The cursor is not one this list gave out: pass next_cursor from the previous page unchanged, or omit it for the first page.', { field: '/cursor' });
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined || mac !== cursorMac(series, workspace, body)) throw refuse();
  let p: unknown;
  try {
    p = (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { p?: unknown }).p;
  } catch {
    throw refuse();
  }
  if (typeof p !== 'number' || !Number.isSafeInteger(p) || p < 1) throw refuse();
  return p;
}

// ---------------------------------------------------------------------------------------------
// Pages

/** What {@link pageNewestFirst} reads. */
export interface PageOptions<T> extends SeriesOptions {
  workspace: string;
  /** `next_cursor` of the previous page; absent for the first page. */
  cursor?: string | null;
  /** Rows wanted (the page is never longer). */
  limit: number;
  /** In-memory filter (kind, status, search…): a filtered page may be short, even empty, and still carry `next_cursor`. */
  match?: (doc: T) => boolean;
  /** Buckets read at most for this page (default 16, about 1,000 documents). */
  maxBuckets?: number;
}

/** One page, newest first; `next_cursor` present when more may follow. */
export interface Page<T> {
  rows: T[];
  next_cursor?: string;
}

/**
 * Reads one page of a series newest first by equality on `{workspace, …scope, pos_bucket}`:
 * starts below the cursor (or above the newest position), bucket after bucket downwards, keeping
 * documents that pass `match`; stops when `limit` rows are collected, after `maxBuckets`
 * buckets, or at bucket 0. No sort, skip or count reaches the store.
 */
export async function pageNewestFirst<T extends Partial<Positioned>>(model: Model<any>, options: PageOptions<T>): Promise<Page<T>> {
  const series = seriesOf(model, options);
  const { workspace, limit } = options;
  const maxBuckets = Math.max(1, options.maxBuckets ?? DEFAULT_MAX_BUCKETS);
  let start: number;
  if (options.cursor) {
    start = decodeCursor(series, workspace, options.cursor);
  } else {
    const c = await counters(model.db).findOne({ _id: counterId(series, workspace) });
    start = (c?.seq ?? 0) + 1;
  }
  const rows: T[] = [];
  if (start <= 1) return { rows };
  let bucket = Math.floor((start - 1) / POS_BUCKET_SIZE);
  for (let read = 0; bucket >= 0; read++, bucket--) {
    if (read >= maxBuckets) return { rows, next_cursor: encodeCursor(series, workspace, (bucket + 1) * POS_BUCKET_SIZE) };
    const docs = (await model.find({ workspace, ...options.scope, pos_bucket: bucket }).lean()) as T[];
    const kept = docs.filter((d) => typeof d.pos === 'number' && d.pos < start && (!options.match || options.match(d))).sort((a, b) => b.pos! - a.pos!);
    for (let i = 0; i < kept.length; i++) {
      rows.push(kept[i]);
      if (rows.length === limit) {
        const more = i < kept.length - 1 || bucket > 0;
        return more ? { rows, next_cursor: encodeCursor(series, workspace, kept[i].pos!) } : { rows };
      }
    }
  }
  return { rows };
}

/** What a list tool or records source answers (CONTRACT §9). */
export interface ListAnswer<R> {
  rows: R[];
  /** Present on unfiltered lists only: the live count kept on write. */
  total?: number;
  /** Present when more may follow. */
  next_cursor?: string;
}

/**
 * One page of a list tool or records source: {@link pageNewestFirst}, rows shaped by `view`, and
 * `total` from the counter when no filter (`match`) applies — a filtered list has no count
 * kept on write, so it answers none.
 */
export async function listNewestFirst<T extends Partial<Positioned>, R>(model: Model<any>, options: PageOptions<T>, view: (doc: T) => R): Promise<ListAnswer<R>> {
  const page = await pageNewestFirst<T>(model, options);
  const answer: ListAnswer<R> = { rows: page.rows.map(view) };
  if (!options.match) answer.total = await countFromCounter(model.db, seriesOf(model, options), options.workspace);
  if (page.next_cursor) answer.next_cursor = page.next_cursor;
  return answer;
}

/** A case-insensitive substring test for in-memory filters (`search`), on lower-cased stored text. */
export function containsText(have: unknown, lowerCasedNeedle: string): boolean {
  return typeof have === 'string' && have.toLowerCase().includes(lowerCasedNeedle);
}

// ---------------------------------------------------------------------------------------------
// Old data

/**
 * Gives a position to each document of a series that has none (data written before paging),
 * per workspace in `created_at` order after any positioned ones, and sets the counters: the
 * block of positions is taken atomically first, then `live` is set from one count of that
 * workspace's series. Run at start-up after `ensureModel`; idempotent (a second run finds
 * nothing to do), and an interrupted run is finished by the next.
 *
 * @returns how many documents got a position
 */
export async function backfillPositions(model: Model<any>, options: SeriesOptions = {}): Promise<number> {
  const series = seriesOf(model, options);
  const lacking = (await model.find({ ...options.scope, pos: { $exists: false } }, { _id: 1, workspace: 1, created_at: 1 }).lean()) as { _id: unknown; workspace: string; created_at?: Date }[];
  if (lacking.length === 0) return 0;
  const byWorkspace = new Map<string, typeof lacking>();
  for (const d of lacking) {
    if (!byWorkspace.has(d.workspace)) byWorkspace.set(d.workspace, []);
    byWorkspace.get(d.workspace)!.push(d);
  }
  const db = model.db;
  for (const [workspace, docs] of byWorkspace) {
    docs.sort((a, b) => (a.created_at?.getTime() ?? 0) - (b.created_at?.getTime() ?? 0) || (String(a._id) < String(b._id) ? -1 : 1));
    const first = await reservePositions(db, series, workspace, docs.length);
    for (let i = 0; i < docs.length; i += 500) {
      await model.bulkWrite(docs.slice(i, i + 500).map((d, j) => {
        const pos = first + i + j;
        return { updateOne: { filter: { _id: d._id, pos: { $exists: false } }, update: { $set: { pos, pos_bucket: Math.floor(pos / POS_BUCKET_SIZE) } } } };
      }));
    }
    // A one-time count at start-up, not per call: makes `live` right even after an interrupted run.
    const live = await model.countDocuments({ workspace, ...options.scope });
    await counters(db).updateOne({ _id: counterId(series, workspace) }, { $set: { live } });
  }
  return lacking.length;
}
