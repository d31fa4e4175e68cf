import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { Connection, Model, Schema } from 'mongoose';
import { CuadraError } from './errors.ts';
import { declareDerivedCollection } from './governance/runs.ts';
import { readByKeys } from './keyed-reads.ts';
import { addGramsOfMany, candidatePositions, isIndexed, markIndexed, trigramsOf } from './search-grams.ts';

/**
 * Bounded lists (CONTRACT §9): newest-first pages read by indexed EQUALITY, never by a sort,
 * a skip or a count over the collection.
 *
 * Why this shape: the MongoDB-protocol server we run on (mongo-java-server) sorts in memory,
 * scans for range queries, and does not implement non-unique secondary indexes at all (it logs
 * "adding secondary index … is not yet implemented. ignoring"): only `_id` and UNIQUE indexes
 * answer by lookup. So each listed document carries `pos` — its place in its series (one series
 * per collection, or per collection and kind, per workspace), strictly increasing in creation
 * order — and `pos_key` = `<series>|<workspace>|<pos>` under a unique (sparse) index. A bucket is
 * 64 consecutive positions (`floor(pos / 64)`); a page reads bucket after bucket downwards with
 * one `{pos_key: {$in: [its 64 keys]}}` (64 unique-index lookups, ~5 ms at any size), orders the
 * bucket's documents in memory and stops when the page is full. Nothing else goes in that query:
 * adding `workspace` beside the `$in` makes the server scan (measured 5.8 ms → 322 ms at 50,000). The last position handed out (`seq`) and the number of
 * documents that exist (`live`) are kept on write in the service's `list_counters` collection, so a
 * list never counts. The same code runs unchanged on MongoDB.
 */

/** Positions per bucket. */
export const POS_BUCKET_SIZE = 64;
/** Buckets read at most for one page by default: ≤ 1,024 positions, whatever the filter. */
export const DEFAULT_MAX_BUCKETS = 16;

/** The fields every listed document gets. */
export interface Positioned {
  /** Place in its series, from 1, strictly increasing in creation order (holes allowed). */
  pos: number;
  /** `<series>|<workspace>|<pos>`, unique: what a page looks documents up by. */
  pos_key: string;
}

/** The lookup key of a position. */
export function positionKey(series: string, workspace: string, pos: number): string {
  return `${series}|${workspace}|${pos}`;
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
  /** The texts a search of the series looks in: their trigrams are kept (search-grams.ts), and indexed at start for older documents. */
  searchable?: (doc: any) => readonly (string | null | undefined)[];
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
// Paging's bookkeeping (positions may have gaps; `live` counts records): moving a counter is not an
// action's effect, and an interrupted call that moved one and wrote no record did nothing (runs.ts).
declareDerivedCollection(COUNTERS_COLLECTION);

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
 * Adds `pos` and `pos_key` to a listed model's schema, and the unique index pages read by. Sparse:
 * documents written before paging have no key until {@link backfillPositions} gives them one.
 */
export function addPositions(schema: Schema<any>): void {
  schema.add({ pos: { type: Number }, pos_key: { type: String } });
  schema.index({ pos_key: 1 }, { unique: true, sparse: true });
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
      return { pos, pos_key: positionKey(series, workspace, pos) };
    }
    if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
  }
  throw new Error(`counter ${_id}: no position after 1,000 attempts`);
}

/**
 * Takes `count` consecutive positions at once (bulk loads, backfill) and answers the first;
 * counts them live unless `countLive` is false. The same compare-and-set as {@link assignPosition}.
 */
export async function assignPositions(db: Connection, series: string, workspace: string, count: number, countLive = true): Promise<number> {
  const _id = counterId(series, workspace);
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const current = await counters(db).findOne({ _id });
    if (!current) {
      await counters(db).insertOne({ _id, seq: 0, live: 0 }).catch((err: { code?: number }) => {
        if (err.code !== 11000) throw err;
      });
      continue;
    }
    const taken = await counters(db).updateOne({ _id, seq: current.seq }, { $inc: { seq: count, live: countLive ? count : 0 } });
    if (taken.modifiedCount === 1) return current.seq + 1;
    await new Promise((r) => setTimeout(r, Math.random() * 20));
  }
  throw new Error(`counter ${_id}: no block of positions after 1,000 attempts`);
}

/**
 * Moves a listed document to the newest position of its series, for lists ordered by "most
 * recently changed first": a new position (not counted live again) replaces the old one, which
 * becomes a hole that pages skip.
 */
export async function repositionDocument(model: Model<any>, id: string, workspace: string, options: SeriesOptions = {}): Promise<void> {
  const series = seriesOf(model, options);
  const pos = await assignPositions(model.db, series, workspace, 1, false);
  await model.updateOne({ _id: id, workspace }, { $set: { pos, pos_key: positionKey(series, workspace, pos) } });
}

/** Counts one document of a series as gone (a delete, or an insert that failed after {@link assignPosition}). */
export async function releasePosition(db: Connection, series: string, workspace: string): Promise<void> {
  await counters(db).updateOne({ _id: counterId(series, workspace) }, { $inc: { live: -1 } });
}

/**
 * Inserts a listed document with its position: assigns it, creates the document, and gives the
 * live count back when the insert fails (a duplicate key, say) before rethrowing. With `searchable`
 * (the series' {@link ListedSeries.searchable}), the document's search trigrams are kept under its
 * position first (search-grams.ts) and the series' first document marks it indexed.
 */
export async function createPositioned<T extends { workspace: string }>(model: Model<T>, doc: T, options: SeriesOptions & { beforeInsert?: (series: string, positioned: Positioned) => Promise<void>; searchable?: (doc: T) => readonly (string | null | undefined)[] } = {}): Promise<T & Positioned> {
  const series = seriesOf(model, options);
  const positioned = { ...doc, ...(await assignPosition(model.db, series, doc.workspace)) };
  try {
    // What is kept under the position before the document exists (its search trigrams): a crash leaves only an extra candidate.
    if (options.searchable) {
      await addGramsOfMany(model.db, series, doc.workspace, [{ pos: positioned.pos, grams: trigramsOf(options.searchable(positioned)) }]);
      // The series' first document: nothing older to index, its searches read the index from now on.
      if (positioned.pos === 1) await markIndexed(model.db, series, doc.workspace);
    }
    await options.beforeInsert?.(series, positioned);
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

// A KeyObject made once: given as a string or Buffer, every createHmac made one per call (≈10 µs each
// on Node 24, most of an HMAC of a short text); the bytes, so the MACs, are the same.
const cursorKey = createSecretKey(Buffer.from(process.env.CUADRA_CURSOR_KEY ?? 'cuadra-list-cursor-v1', 'utf8'));

function cursorMac(series: string, workspace: string, body: string): string {
  return createHmac('sha256', cursorKey).update(`${series}\n${workspace}\n${body}`).digest('base64url').slice(0, 22);
}

/** Constant-time equality of two short strings (a cursor's MAC). */
function sameText(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * An opaque cursor carrying `value` for this series in this workspace: its JSON in base64url and a
 * MAC over series, workspace and that text, so a caller can hand back only what was given out.
 */
export function encodeSignedCursor(series: string, workspace: string, value: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${body}.${cursorMac(series, workspace, body)}`;
}

/** The value of a cursor {@link encodeSignedCursor} gave out for this series and workspace; `invalid_input` at `/cursor` for anything else. */
export function decodeSignedCursor(series: string, workspace: string, cursor: string): Record<string, unknown> {
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined || !sameText(mac, cursorMac(series, workspace, body))) throw foreignCursor();
  try {
    const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON: refused below
  }
  throw foreignCursor();
}

/** The refusal of a cursor the series did not give out. */
export function foreignCursor(): CuadraError {
  return new CuadraError('invalid_input', 'The cursor is not one this list gave out: pass next_cursor from the previous page unchanged, or omit it for the first page.', { field: '/cursor' });
}

/** An opaque cursor: continue below position `pos` of this series in this workspace. */
export function encodeCursor(series: string, workspace: string, pos: number): string {
  return encodeSignedCursor(series, workspace, { p: pos });
}

/** The position a cursor continues below; `invalid_input` at `/cursor` for anything this series did not give out. */
export function decodeCursor(series: string, workspace: string, cursor: string): number {
  const p = decodeSignedCursor(series, workspace, cursor).p;
  if (typeof p !== 'number' || !Number.isSafeInteger(p) || p < 1) throw foreignCursor();
  return p;
}

// ---------------------------------------------------------------------------------------------
// Pages

function inScope(doc: Record<string, unknown>, scope: Record<string, string> | undefined): boolean {
  return !scope || Object.entries(scope).every(([k, v]) => doc[k] === v);
}

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
  /**
   * The search term, when the series keeps its documents' trigrams (search-grams.ts): once the
   * workspace's series is wholly indexed, the page reads the candidate positions the index gives
   * instead of every position (`match` still decides). A term under 3 characters walks positions.
   */
  searchTerm?: string;
}

/** One page, newest first; `next_cursor` present when more may follow. */
export interface Page<T> {
  rows: T[];
  next_cursor?: string;
}

/**
 * Reads one page of a series newest first by unique-key lookups of 64 positions at a time:
 * starts below the cursor (or above the newest position), bucket after bucket downwards, keeping
 * documents that pass `match`; stops when `limit` rows are collected, after `maxBuckets`
 * buckets, or at bucket 0. No sort, skip or count reaches the store.
 */
export async function pageNewestFirst<T>(model: Model<any>, options: PageOptions<T>): Promise<Page<T>> {
  const { live: _live, ...page } = await readPage(model, options);
  return page;
}

/** A page and, when its first read was the series' counter (a first page), the live count that read gave. */
type PageRead<T> = Page<T> & { live?: number };

async function readPage<T>(model: Model<any>, options: PageOptions<T>): Promise<PageRead<T>> {
  const series = seriesOf(model, options);
  const { workspace, limit } = options;
  const maxBuckets = Math.max(1, options.maxBuckets ?? DEFAULT_MAX_BUCKETS);
  let start: number;
  let live: number | undefined;
  if (options.cursor) {
    start = decodeCursor(series, workspace, options.cursor);
  } else {
    // Read with the other reads of this turn (keyed-reads.ts): a dashboard's lists of one subgraph share one command.
    const [c] = await readByKeys<CounterDoc>(model.db, COUNTERS_COLLECTION, '_id', [counterId(series, workspace)]);
    start = (c?.seq ?? 0) + 1;
    live = c?.live ?? 0;
  }
  const rows: T[] = [];
  const withLive = (p: Page<T>): PageRead<T> => (live === undefined ? p : { ...p, live });
  if (start <= 1) return withLive({ rows });
  if (options.searchTerm && options.searchTerm.length >= 3 && (await isIndexed(model.db, series, workspace))) {
    return withLive(await readCandidates(model, series, options, start, maxBuckets));
  }
  let bucket = Math.floor((start - 1) / POS_BUCKET_SIZE);
  for (let read = 0; bucket >= 0; read++, bucket--) {
    if (read >= maxBuckets) return withLive({ rows, next_cursor: encodeCursor(series, workspace, (bucket + 1) * POS_BUCKET_SIZE) });
    const low = Math.max(1, bucket * POS_BUCKET_SIZE);
    const high = Math.min(bucket * POS_BUCKET_SIZE + POS_BUCKET_SIZE, start); // exclusive
    const keys = Array.from({ length: high - low }, (_, i) => positionKey(series, workspace, low + i));
    // Only the key in the query (see the top of this file); the workspace is checked here as well. Read
    // with the other reads of this turn: lists of one series asked at once (a dashboard's) share the command.
    const docs = await readByKeys<T & Partial<Positioned> & Record<string, unknown>>(model.db, model.collection.collectionName, 'pos_key', keys);
    const kept = docs.filter((d) => d.workspace === workspace && typeof d.pos === 'number' && inScope(d, options.scope) && (!options.match || options.match(d)))
      .sort((a, b) => b.pos! - a.pos!);
    for (let i = 0; i < kept.length; i++) {
      rows.push(kept[i]);
      if (rows.length === limit) {
        const more = i < kept.length - 1 || bucket > 0;
        return withLive(more ? { rows, next_cursor: encodeCursor(series, workspace, kept[i].pos!) } : { rows });
      }
    }
  }
  return withLive({ rows });
}

/**
 * A searched page from the trigram index: candidate positions below `start`, newest first, read 64
 * at a time by `pos_key` and kept when they pass `match`; stops at `limit` rows, after
 * `maxBuckets` × 64 candidates (the cursor then continues below the last one read), or when the
 * index has no more.
 */
async function readCandidates<T>(model: Model<any>, series: string, options: PageOptions<T>, start: number, maxBuckets: number): Promise<Page<T>> {
  const { workspace, limit } = options;
  const rows: T[] = [];
  let below = start;
  let examined = 0;
  for (;;) {
    const found = (await candidatePositions(model.db, series, workspace, options.searchTerm!, below, POS_BUCKET_SIZE))!;
    for (let i = 0; i < found.positions.length; i += POS_BUCKET_SIZE) {
      const slice = found.positions.slice(i, i + POS_BUCKET_SIZE);
      const docs = await readByKeys<T & Partial<Positioned> & Record<string, unknown>>(model.db, model.collection.collectionName, 'pos_key', slice.map((p) => positionKey(series, workspace, p)));
      const kept = docs.filter((d) => d.workspace === workspace && typeof d.pos === 'number' && inScope(d, options.scope) && (!options.match || options.match(d)))
        .sort((a, b) => b.pos! - a.pos!);
      for (let k = 0; k < kept.length; k++) {
        rows.push(kept[k]);
        if (rows.length === limit) {
          const more = k < kept.length - 1 || i + POS_BUCKET_SIZE < found.positions.length || !found.exhausted;
          return more ? { rows, next_cursor: encodeCursor(series, workspace, kept[k].pos!) } : { rows };
        }
      }
      examined += slice.length;
      const last = slice[slice.length - 1];
      if (examined >= maxBuckets * POS_BUCKET_SIZE && (i + POS_BUCKET_SIZE < found.positions.length || !found.exhausted)) return { rows, next_cursor: encodeCursor(series, workspace, last) };
    }
    if (found.exhausted) return { rows };
    below = found.lowest;
  }
}

/** What a list tool or records source answers (CONTRACT §9). */
export type ListAnswer<R> = {
  rows: R[];
  /** Present on unfiltered lists only: the live count kept on write. */
  total?: number;
  /** Present when more may follow. */
  next_cursor?: string;
};

/**
 * One page of a list tool or records source: {@link pageNewestFirst}, rows shaped by `view`, and
 * `total` from the counter when no filter (`match`) applies — a filtered list has no count
 * kept on write, so it answers none.
 */
export async function listNewestFirst<T, R>(model: Model<any>, options: PageOptions<T>, view: (doc: T) => R): Promise<ListAnswer<R>> {
  const page = await readPage<T>(model, options);
  const answer: ListAnswer<R> = { rows: page.rows.map(view) };
  // A first page read the counter already (seq and live are one document): its count is that read's.
  if (!options.match) answer.total = page.live !== undefined ? Math.max(page.live, 0) : (await countFromCounter(model.db, seriesOf(model, options), options.workspace));
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
  // Once a series has been backfilled every new document takes its position when created: later
  // starts read one marker instead of scanning the collection for documents without one.
  const marker = `backfilled:${series}`;
  if (await counters(model.db).findOne({ _id: marker })) return 0;
  const lacking = (await model.find({ ...options.scope, pos_key: { $exists: false } }, { _id: 1, workspace: 1, created_at: 1 }).lean()) as { _id: unknown; workspace: string; created_at?: Date }[];
  const done = () => counters(model.db).updateOne({ _id: marker }, { $set: { seq: 0, live: 0 } }, { upsert: true });
  if (lacking.length === 0) {
    await done();
    return 0;
  }
  const byWorkspace = new Map<string, typeof lacking>();
  for (const d of lacking) {
    if (!byWorkspace.has(d.workspace)) byWorkspace.set(d.workspace, []);
    byWorkspace.get(d.workspace)!.push(d);
  }
  const db = model.db;
  for (const [workspace, docs] of byWorkspace) {
    docs.sort((a, b) => (a.created_at?.getTime() ?? 0) - (b.created_at?.getTime() ?? 0) || (String(a._id) < String(b._id) ? -1 : 1));
    const first = await assignPositions(db, series, workspace, docs.length, false);
    for (let i = 0; i < docs.length; i += 500) {
      await model.bulkWrite(docs.slice(i, i + 500).map((d, j) => {
        const pos = first + i + j;
        return { updateOne: { filter: { _id: d._id, pos_key: { $exists: false } }, update: { $set: { pos, pos_key: positionKey(series, workspace, pos) } } } };
      }));
    }
    // A one-time count at start-up, not per call: makes `live` right even after an interrupted run.
    const live = await model.countDocuments({ workspace, ...options.scope });
    await counters(db).updateOne({ _id: counterId(series, workspace) }, { $set: { live } });
  }
  await done();
  return lacking.length;
}

/**
 * Keeps the search trigrams of every document of a searchable series written before they were kept
 * (search-grams.ts), per workspace, reading its positions 64 at a time by `pos_key`, then marks
 * the workspace's series indexed: its searches read the index from then on. Run at start-up after
 * {@link backfillPositions}; a workspace already marked is skipped, and an interrupted run redoes
 * only the workspace it was in (adding a position twice changes nothing).
 * @returns the workspaces indexed
 */
export async function indexSearchable(model: Model<any>, options: SeriesOptions & { searchable: (doc: any) => readonly (string | null | undefined)[] }): Promise<number> {
  const series = seriesOf(model, options);
  let indexed = 0;
  for (const c of await counters(model.db).find({}).toArray()) {
    if (!c._id.startsWith(`${series}:`)) continue;
    const workspace = c._id.slice(series.length + 1);
    if (await isIndexed(model.db, series, workspace)) continue;
    for (let low = 1; low <= c.seq; low += POS_BUCKET_SIZE) {
      const keys = Array.from({ length: Math.min(POS_BUCKET_SIZE, c.seq - low + 1) }, (_, i) => positionKey(series, workspace, low + i));
      const docs = await model.collection.find({ pos_key: { $in: keys } }).toArray();
      await addGramsOfMany(model.db, series, workspace, docs.filter((d) => d.workspace === workspace && typeof d.pos === 'number').map((d) => ({ pos: d.pos as number, grams: trigramsOf(options.searchable(d)) })));
    }
    await markIndexed(model.db, series, workspace);
    indexed++;
  }
  return indexed;
}
