import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import mongoose, { type Connection, type Model } from 'mongoose';

/**
 * Run stamps: what makes an interrupted action's effect provable (CONTRACT.md §9, issue 31
 * finding 6). While a handler runs, every document it inserts, updates or replaces in its owning
 * service's database carries the run's intent id in `_runs` (the newest {@link RUNS_KEPT}), in the
 * same write — the only atomicity the store gives is one document's. After a crash, the owner's
 * records answer "did this action write anything?" from the stamps alone: a stamp found, it did;
 * none found, it provably did not (nothing it writes goes unstamped), and it may run again.
 *
 * A delete leaves no document to stamp: before a run's first delete, its intent is marked
 * `deletes` (awaited, so the mark is stored before anything is deleted), and such a run is never
 * taken for "did nothing".
 *
 * The mechanism sits under every module (mongoose's collection layer, which models and
 * `model.collection` calls both go through), so no handler has anything to do.
 */
export const RUN_FIELD = '_runs';

/** Stamps a document keeps: the runs of its newest writes (older ones are settled within seconds). */
export const RUNS_KEPT = 16;

/** The run a handler is executing in: its intent id, and how to mark that intent before a delete. */
export interface RunContext {
  run: string;
  /**
   * What names the call across its attempts, when it can run again after an attempt recovery
   * settled as having written nothing: its Idempotency-Key record (key and nonce) and tool, or its
   * approval. Absent for a call no rerun can follow (no key, no approval).
   */
  scope?: string;
  /** Marks the intent as having deleted something (stored before the first delete). */
  markDeletes(): Promise<void>;
  /** Set once the mark is stored. */
  deletesMarked?: Promise<void>;
}

/** The run of the handler executing in this async context, if any. */
export const runScope = new AsyncLocalStorage<RunContext>();

/**
 * The id of a record a call creates, the same in every attempt of the call (`<prefix>_` and 16
 * characters, as `newId`'s), or null outside a call that can be run again (then the caller takes a
 * random id). `part` tells apart the records of one prefix one call creates.
 *
 * Why: recovery reruns a keyed or approved call whose dead attempt provably wrote nothing — as far
 * as the store shows at that moment. A write the dead process had already sent can still be applied
 * after that (the store's receive buffer, its event loop lagging under load): under a random id it
 * adds a second record beside the rerun's (a second payment: docs/measurements.md, "A double payment
 * after a kill"); under this id the two collide on `_id`, one insert wins and the rerun answers the
 * record that exists. A tool that creates a record with it must handle the duplicate-key refusal
 * (11000) by answering the record found under the id.
 */
export function repeatableId(prefix: string, part = ''): string | null {
  const scope = runScope.getStore()?.scope;
  if (!scope) return null;
  return `${prefix}_${createHash('sha256').update(`${scope}\n${prefix}\n${part}`).digest('base64url').slice(0, 16)}`;
}

/**
 * The collision branch of a create under a {@link repeatableId} (or any id chosen before the
 * insert): after the insert failed with `err`, the document already stored under `id` in the
 * workspace — the one an earlier attempt of the same call wrote, its insert applied late — or null
 * when the failure is anything else (not a duplicate, another unique key, no id chosen). The caller
 * answers (and, if its kind has steps, finishes) the document found, or throws `err`.
 */
export async function storedUnderId<T>(err: unknown, model: Model<T>, id: string | null | undefined, workspace: string): Promise<T | null> {
  if (!id || (err as { code?: number } | null)?.code !== 11000) return null;
  return (await model.findOne({ _id: id, workspace } as never).lean()) as T | null;
}

/**
 * Inserts `doc` (by `insert`) under an id chosen before the insert ({@link repeatableId}) and answers
 * the document the call stands on: `doc` when this insert stored it, or — the id taken — the one an
 * earlier attempt of the same call stored under it ({@link storedUnderId}), for the caller to answer
 * or finish instead of making a second one. Any other failure is thrown as it came.
 */
export async function insertOrStored<T>(insert: () => Promise<unknown>, model: Model<T>, doc: T, workspace: string): Promise<T> {
  try {
    await insert();
    return doc;
  } catch (err) {
    const known = await storedUnderId(err, model, (doc as { _id?: string })._id, workspace);
    if (!known) throw err;
    return known;
  }
}

/** Connections stamped, each with the collections stamped on it (null: all but the derived ones). */
const stamped = new WeakMap<Connection, ReadonlySet<string> | null>();

/** Whether a write to `collection` on `conn` is stamped. */
function isStamped(conn: Connection | undefined, collection: string | undefined): boolean {
  if (!conn || !stamped.has(conn) || derived.has(collection ?? '')) return false;
  const only = stamped.get(conn);
  return !only || only.has(collection ?? '');
}

/**
 * Collections of bookkeeping derived from the records (the list counters of paging.ts): a write
 * there is not an action's effect, so it carries no stamp and proves nothing. A shared
 * counter every call moves would otherwise make every interrupted call look as if it had acted.
 */
const derived = new Set<string>(['health']);

/** Declares a collection derived (see {@link derived}); called by the module that keeps it. */
export function declareDerivedCollection(name: string): void {
  derived.add(name);
}
let patched = false;

const INSERTS = new Set(['insertOne', 'insertMany']);
const UPDATES = new Set(['updateOne', 'updateMany', 'findOneAndUpdate']);
const REPLACES = new Set(['replaceOne', 'findOneAndReplace']);
const DELETES = new Set(['deleteOne', 'deleteMany', 'findOneAndDelete']);

/** A mongoose document (Model.bulkWrite hands them on as is) as the plain object it is written as. */
function plain(doc: unknown): unknown {
  const d = doc as { toBSON?: () => unknown } | null;
  return d && typeof d === 'object' && typeof d.toBSON === 'function' && !Array.isArray(d) ? d.toBSON() : doc;
}

/** A replacement of a stored document: its stamps, then this run's. */
function stampDoc(doc: unknown, run: string): unknown {
  const p = plain(doc);
  if (p && typeof p === 'object' && !Array.isArray(p)) {
    const d = p as Record<string, unknown>;
    const kept = Array.isArray(d[RUN_FIELD]) ? (d[RUN_FIELD] as unknown[]).filter((x) => x !== run) : [];
    d[RUN_FIELD] = [...kept, run].slice(-RUNS_KEPT);
  }
  return p;
}

/** A new document is this run's write alone: stamps copied from another document (a snapshot of it) are not its own. */
function stampNew(doc: unknown, run: string): unknown {
  const p = plain(doc);
  if (p && typeof p === 'object' && !Array.isArray(p)) (p as Record<string, unknown>)[RUN_FIELD] = [run];
  return p;
}

function stampUpdate(update: unknown, run: string): unknown {
  if (!update || typeof update !== 'object') return update;
  if (Array.isArray(update)) {
    // An aggregation-pipeline update: one more stage appends the stamp.
    return [...update, { $set: { [RUN_FIELD]: { $slice: [{ $concatArrays: [{ $ifNull: [`$${RUN_FIELD}`, []] }, [run]] }, -RUNS_KEPT] } } }];
  }
  const u = update as Record<string, Record<string, unknown> | undefined>;
  if (!Object.keys(u).some((k) => k.startsWith('$'))) return stampDoc(u, run); // a replacement document
  // An update that writes the stamps itself (a stored document read and written back whole, with
  // its stamps) would conflict with a $push on the same path: its copy is taken out, and a $set of
  // them carries this run's too.
  const out: Record<string, Record<string, unknown> | undefined> = {};
  let carried: unknown[] | undefined;
  for (const [op, fields] of Object.entries(u)) {
    if (!fields || typeof fields !== 'object' || !Object.keys(fields).some((f) => f === RUN_FIELD || f.startsWith(`${RUN_FIELD}.`))) {
      out[op] = fields;
      continue;
    }
    const rest = Object.fromEntries(Object.entries(fields).filter(([f]) => f !== RUN_FIELD && !f.startsWith(`${RUN_FIELD}.`)));
    if (op === '$set' && Array.isArray(fields[RUN_FIELD])) carried = fields[RUN_FIELD] as unknown[];
    if (Object.keys(rest).length > 0) out[op] = rest;
  }
  if (carried) return { ...out, $set: { ...(out.$set ?? {}), [RUN_FIELD]: [...carried.filter((x) => x !== run), run].slice(-RUNS_KEPT) } };
  return { ...out, $push: { ...(out.$push ?? {}), [RUN_FIELD]: { $each: [run], $slice: -RUNS_KEPT } } };
}

function stampBulk(ops: unknown, run: string): void {
  if (!Array.isArray(ops)) return;
  for (const op of ops as Record<string, Record<string, unknown>>[]) {
    if (op.insertOne) op.insertOne.document = stampNew(op.insertOne.document, run);
    for (const k of ['updateOne', 'updateMany'] as const) if (op[k]) op[k].update = stampUpdate(op[k].update, run);
    if (op.replaceOne) op.replaceOne.replacement = stampDoc(op.replaceOne.replacement, run);
  }
}

/**
 * Stamps every write a handler makes on `db` with its run: the owning service's own database, and
 * of the governance database only the records a handler may make or change (`only`: policies,
 * approvals — never the ledger, whose entries are hashed as written, nor other bookkeeping). The
 * collection layer is wrapped once per process; only connections given here are stamped.
 */
export function stampRunsOn(db: Connection, options: { only?: readonly string[] } = {}): void {
  stamped.set(db, options.only ? new Set(options.only) : null);
  if (patched) return;
  patched = true;
  const proto = (mongoose.Collection as unknown as { prototype: Record<string, unknown> }).prototype;
  for (const method of [...INSERTS, ...UPDATES, ...REPLACES, ...DELETES, 'bulkWrite']) {
    const original = proto[method] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') continue;
    proto[method] = function stampedWrite(this: { conn?: Connection; name?: string }, ...args: unknown[]) {
      const ctx = runScope.getStore();
      if (!ctx || !isStamped(this.conn, this.name)) return original.apply(this, args);
      if (method === 'insertOne') args[0] = stampNew(args[0], ctx.run);
      else if (method === 'insertMany' && Array.isArray(args[0])) args[0] = args[0].map((d) => stampNew(d, ctx.run));
      else if (UPDATES.has(method)) args[1] = stampUpdate(args[1], ctx.run);
      else if (REPLACES.has(method)) args[1] = stampDoc(args[1], ctx.run);
      else if (method === 'bulkWrite') {
        stampBulk(args[0], ctx.run);
        if (Array.isArray(args[0]) && (args[0] as Record<string, unknown>[]).some((op) => op.deleteOne || op.deleteMany)) {
          ctx.deletesMarked ??= ctx.markDeletes();
          return ctx.deletesMarked.then(() => original.apply(this, args));
        }
      }
      if (DELETES.has(method)) {
        ctx.deletesMarked ??= ctx.markDeletes();
        return ctx.deletesMarked.then(() => original.apply(this, args));
      }
      return original.apply(this, args);
    };
  }
}

/** Where a run's stamp was found: a collection and (up to two of) the ids of its documents that carry it. */
export interface RunStamps { collection: string; ids: unknown[] }

/**
 * The records of `db` (a connection given to {@link stampRunsOn}) that carry the stamp of `run` (a scan of each collection: only for settling
 * an interrupted action, which is rare), by collection; empty when it wrote nothing there.
 */
export async function findRunStamps(db: Connection, run: string): Promise<RunStamps[]> {
  const found: RunStamps[] = [];
  const collections = await db.db!.listCollections({}, { nameOnly: true }).toArray();
  for (const { name } of collections) {
    if (name.startsWith('system.') || !isStamped(db, name)) continue;
    const docs = await db.db!.collection(name).find({ [RUN_FIELD]: run }, { projection: { _id: 1 } }).limit(2).toArray();
    if (docs.length > 0) found.push({ collection: name, ids: docs.map((d) => d._id) });
  }
  return found;
}

/**
 * Takes the run stamps out of a handler's output (in place; a view that spreads a stored document
 * would otherwise answer them): they are bookkeeping of the owner, never part of an answer.
 */
export function withoutRunStamps<T>(value: T, depth = 0): T {
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (const item of value) withoutRunStamps(item, depth + 1);
    return value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value; // dates, buffers…
  const o = value as Record<string, unknown>;
  if (RUN_FIELD in o) delete o[RUN_FIELD];
  for (const k in o) withoutRunStamps(o[k], depth + 1);
  return value;
}
