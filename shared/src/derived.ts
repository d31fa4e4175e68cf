import type { Connection, Model } from 'mongoose';
import { newId } from './credentials.ts';
import type { MaintenanceHook } from './module.ts';

/**
 * Documents derived from other documents and kept on write — a board's columns (their cards in
 * order, counts and sums), a metric's day counters — without transactions (INFRA.md: the store
 * has none). The pattern the invoices rollups use (subgraphs/invoices/src/books/rollup-intents.ts), in a
 * general form any module can use:
 *
 * 1. the changes to the derived documents are written as an *intent* on the source document, in
 *    the same conditional update as the change itself (one document, one atomic write), after a
 *    *marker* naming it is stored in the `derived_pending` collection (so a repair finds it
 *    without scanning the source collection);
 * 2. each change is applied with a mark (`<intent>#<n>`) that the update both tests and adds
 *    (`{_id, applied: {$ne: mark}}` → `…, $addToSet: {applied: mark}`), so applying it twice is a
 *    no-op — counters are never doubled by a retry or by a repair racing the writer;
 * 3. the intent is then pulled from the source document, and only after that are the marks
 *    moved from `applied` to the document's last finished ones (`done`, {@link DONE_MARKS}) — nobody
 *    reading the source from then on applies it again, and one who read it before is refused by
 *    `done` as by `applied` — and the marker deleted.
 *
 * A process that dies between 1 and 3 leaves the marker; {@link repairDerived} finishes the
 * intent from the source document (or drops the marker when the write never happened).
 *
 * One source document has **at most one intent in flight**: a writer carries a new intent only on
 * a document whose last one is applied ({@link settleInFlight}). Counters commute, but a card does
 * not: the intent that pulls a card from a column must not run before the one that pushed it
 * there (a `$pull` of a card not there yet is a no-op, and the late `$push` then leaves the card in
 * two columns; the reverse order leaves it in none). Applying one document's intents in the order
 * they were written, each whole before the next is written, gives every derived document the
 * changes in that order, whatever the writers' interleaving. Changes
 * are stored as plain data (paths and values), never as update operators, so they fit in a
 * document on any MongoDB.
 */

/** One change to one derived document. */
export interface DerivedChange {
  /** The derived collection's name. */
  coll: string;
  /** The derived document's `_id`. */
  id: string;
  /** Counters added: `[path, amount]`. */
  inc?: [string, number][];
  /** Values set: `[path, value]`. */
  set?: [string, unknown][];
  /** Values set only when the document is created: `[path, value]`. */
  init?: [string, unknown][];
  /** An element added to an array kept sorted: `[path, element, sort spec]`. */
  push?: [string, Record<string, unknown>, Record<string, 1 | -1>][];
  /** Array elements removed: `[path, match]`. */
  pull?: [string, Record<string, unknown>][];
}

/** The changes one write of a source document makes to derived documents. */
export interface DerivedIntent {
  id: string;
  at: Date;
  changes: DerivedChange[];
}

/** Fields a source document carries for its intents in flight. */
export interface FeedsDerived {
  pending_derived?: DerivedIntent[];
}

const MARKERS = 'derived_pending';

interface MarkerDoc {
  _id: string;
  workspace: string;
  /** The source collection and document that carry the intent. */
  source: string;
  doc: string;
  at: Date;
  /** Where the intent's marks go, so a repair can forget them when its applier died after taking the intent off the source. */
  marks?: { coll: string; id: string; mark: string }[];
}

function marksOf(intent: DerivedIntent): { coll: string; id: string; mark: string }[] {
  return intent.changes.map((c, n) => ({ coll: c.coll, id: c.id, mark: `${intent.id}#${n}` }));
}

/**
 * How many finished intents' marks a derived document remembers (`done`, newest last) once their
 * intents left their source documents. An applier that read an intent before another finished it
 * (a repair that won its claim while the live writer, slower than {@link REPAIR_AFTER_MS}, was
 * still applying; a writer's settle beside a repair) would otherwise find the mark forgotten and
 * apply the change a second time — a counter doubled, a card pushed into a column twice. It is
 * refused while the mark is among the last {@link DONE_MARKS} finished on that document: a stale
 * read is milliseconds to seconds old, a few changes of one document at most; ~30 bytes each. (The
 * invoices rollups do the same: subgraphs/invoices/src/books/rollup-intents.ts.)
 */
export const DONE_MARKS = 64;

/** The filter's part that lets a change with `mark` apply: neither in flight on the document (`applied`) nor finished there lately (`done`). */
export function unmarked(mark: string): { applied: { $ne: string }; done: { $ne: string } } {
  return { applied: { $ne: mark }, done: { $ne: mark } };
}

/** The update that retires a finished change's `mark`: moved, in one write, from `applied` to the last {@link DONE_MARKS} finished. */
export function retireMark(mark: string): Record<string, unknown> {
  return { $pull: { applied: mark }, $push: { done: { $each: [mark], $slice: -DONE_MARKS } } };
}

async function forgetMarks(db: Connection, marks: readonly { coll: string; id: string; mark: string }[]): Promise<void> {
  for (const t of marks) await db.collection(t.coll).updateOne({ _id: t.id } as never, retireMark(t.mark) as never);
}

/** A new intent, or null when there is nothing to change. */
export function derivedIntent(changes: DerivedChange[], at: Date): DerivedIntent | null {
  const kept = changes.filter((c) => (c.inc?.some(([, v]) => v !== 0)) || c.set?.length || c.push?.length || c.pull?.length || c.init?.length);
  return kept.length ? { id: newId('drv'), at, changes: kept.map((c) => ({ ...c, inc: c.inc?.filter(([, v]) => v !== 0) })) } : null;
}

/** The `$push` that carries the intent, to merge into the source document's own conditional update. */
export function carryIntent(intent: DerivedIntent | null): Record<string, unknown> {
  return intent ? { pending_derived: intent } : {};
}

/**
 * Stores the marker of an intent before the write that carries it: a repair finds in-flight
 * intents by this small collection. A marker whose write never happened is dropped by the repair
 * (or at once by {@link dropMarker} when the writer knows its conditional update lost).
 */
export async function markIntent(db: Connection, workspace: string, source: Model<any>, docId: string, intent: DerivedIntent | null): Promise<void> {
  if (!intent) return;
  await db.collection<MarkerDoc>(MARKERS).insertOne({ _id: intent.id, workspace, source: source.collection.collectionName, doc: docId, at: intent.at, marks: marksOf(intent) });
}

/** Removes the marker of an intent whose source write did not happen (a lost conditional update). */
export async function dropMarker(db: Connection, intent: DerivedIntent | null): Promise<void> {
  if (intent) await db.collection<MarkerDoc>(MARKERS).deleteOne({ _id: intent.id });
}

function updateOf(change: DerivedChange, mark: string): Record<string, unknown> {
  const update: Record<string, any> = { $addToSet: { applied: mark } };
  if (change.inc?.length) update.$inc = Object.fromEntries(change.inc);
  if (change.set?.length) update.$set = Object.fromEntries(change.set);
  if (change.init?.length) update.$setOnInsert = Object.fromEntries(change.init);
  if (change.push?.length) update.$push = Object.fromEntries(change.push.map(([path, element, sort]) => [path, { $each: [element], $sort: sort }]));
  if (change.pull?.length) update.$pull = Object.fromEntries(change.pull);
  return update;
}

/**
 * Applies an intent to its derived documents (each change once, whoever applies it), then takes
 * it off its source document and forgets its marks. Idempotent: a repair racing the writer, or a
 * second repair, changes nothing twice.
 */
export async function applyIntent(db: Connection, source: Model<any>, docId: string, intent: DerivedIntent | null): Promise<void> {
  if (!intent) return;
  const marks = marksOf(intent);
  for (const [n, change] of intent.changes.entries()) {
    try {
      await db.collection(change.coll).updateOne({ _id: change.id, ...unmarked(marks[n].mark) } as never, updateOf(change, marks[n].mark) as never, { upsert: true });
    } catch (err) {
      // The document exists and holds this mark already: the upsert's insert collides on _id.
      if ((err as { code?: number }).code !== 11000) throw err;
    }
  }
  const done = await source.collection.updateOne({ _id: docId, 'pending_derived.id': intent.id } as never, { $pull: { pending_derived: { id: intent.id } } } as never);
  // The source no longer lists the intent, so nobody will apply it again: its marks can go (a
  // process dying here leaves the marker, and the repair forgets them from it).
  if (done.modifiedCount === 1) await forgetMarks(db, marks);
  await db.collection<MarkerDoc>(MARKERS).deleteOne({ _id: intent.id });
}

/**
 * How long work in flight (an intent, a payment, an import: anything a marker names) is left to the
 * process that started it before the owner's sweep takes it over: one length for every repair of
 * every service (`CUADRA_REPAIR_AFTER_MS` shortens it for tests).
 */
export const REPAIR_AFTER_MS = Number(process.env.CUADRA_REPAIR_AFTER_MS ?? 60_000);

/**
 * Takes over an intent whose writer is presumed dead: its marker is older than `olderThanMs`, and
 * this caller wins the conditional update that renews the marker's time (a lease: concurrent
 * repairs and waiting writers race for it and exactly one applies the intent; marks alone do not
 * make concurrent appliers safe, since the first to finish forgets them while another may still be
 * applying). An intent on its source without a marker (dropped while its writer was stalled before
 * the write) gets one again, by an insert only one caller wins — and only while the source, read
 * again after the insert, still lists it (the caller's read may predate another's finishing it).
 */
async function claimStale(db: Connection, workspace: string, source: Model<any>, docId: string, intent: DerivedIntent, marker: MarkerDoc | null, now: number, olderThanMs: number): Promise<boolean> {
  const markers = db.collection<MarkerDoc>(MARKERS);
  if (marker) {
    if (now - new Date(marker.at).getTime() < olderThanMs) return false;
    return (await markers.updateOne({ _id: marker._id, at: marker.at }, { $set: { at: new Date(now) } })).modifiedCount === 1;
  }
  if (now - new Date(intent.at).getTime() < olderThanMs) return false;
  try {
    await markers.insertOne({ _id: intent.id, workspace, source: source.collection.collectionName, doc: docId, at: new Date(now), marks: marksOf(intent) });
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return false;
    throw err;
  }
  // "No marker" may only mean another process finished the intent after the caller read its source
  // (an applier takes it off the source before deleting the marker, and has forgotten its marks):
  // the claim holds only while the source still lists it — else this marker goes, nothing applied.
  if (await source.collection.countDocuments({ _id: docId, 'pending_derived.id': intent.id } as never, { limit: 1 })) return true;
  await markers.deleteOne({ _id: intent.id });
  return false;
}

/**
 * Whether a source document, as read, may carry a new intent: true when it has none in flight.
 * Otherwise the caller waits and reads it again (the writer of the intent in flight is applying
 * it; that takes milliseconds), and an intent left longer than {@link REPAIR_AFTER_MS} is
 * taken over here by whoever wins its claim — applied, as {@link repairDerived} would, its writer
 * presumed dead — so a crash blocks the document's next change for that long at most. Intents are
 * applied in the order they were written.
 *
 * @returns true when `doc` has no intent in flight; false when the caller must read it again
 */
export async function settleInFlight(db: Connection, workspace: string, source: Model<any>, docId: string, doc: FeedsDerived, now = Date.now()): Promise<boolean> {
  const inFlight = doc.pending_derived ?? [];
  if (!inFlight.length) return true;
  for (const intent of inFlight) {
    if (now - new Date(intent.at).getTime() < REPAIR_AFTER_MS) return false;
    const marker = await db.collection<MarkerDoc>(MARKERS).findOne({ _id: intent.id });
    if (!(await claimStale(db, workspace, source, docId, intent, marker, now, REPAIR_AFTER_MS))) return false;
    await applyIntent(db, source, docId, intent);
  }
  return false;
}

/**
 * Finishes the intents a dead writer left in a workspace (markers older than
 * {@link REPAIR_AFTER_MS}), reading only the markers (what is in flight or abandoned), so
 * it costs one small read when all is well. Run before the reads that show derived documents.
 *
 * @returns how many intents it applied
 */
export async function repairDerived(db: Connection, workspace: string, sources: readonly Model<any>[], now = new Date(), olderThanMs = REPAIR_AFTER_MS): Promise<number> {
  const byName = new Map(sources.map((m) => [m.collection.collectionName, m]));
  const stale = await db.collection<MarkerDoc>(MARKERS).find({ workspace }).limit(200).toArray();
  let repaired = 0;
  for (const marker of stale) {
    if (now.getTime() - new Date(marker.at).getTime() < olderThanMs) continue;
    const model = byName.get(marker.source);
    if (!model) continue;
    const doc = await model.collection.findOne({ _id: marker.doc } as never) as FeedsDerived | null;
    const intent = doc?.pending_derived?.find((i) => i.id === marker._id);
    // Another repair, or a writer waiting on this document, took it over first.
    if (!(await claimStale(db, workspace, model, marker.doc, intent ?? { id: marker._id, at: marker.at, changes: [] }, marker, now.getTime(), olderThanMs))) continue;
    if (intent) {
      await applyIntent(db, model, marker.doc, intent);
      repaired++;
    } else {
      // The write it announced never happened (a lost race, a crash before it: no marks exist), or
      // is done and its applier died before forgetting its marks.
      await forgetMarks(db, marker.marks ?? []);
      await db.collection<MarkerDoc>(MARKERS).deleteOne({ _id: marker._id });
    }
  }
  return repaired;
}

/**
 * A module's maintenance hook (ModuleManifest.maintenance) that finishes, in every workspace, the
 * intents dead writers left on documents of `sources`: the background sweep repairs derived
 * documents, so the reads that show them never write.
 */
export function derivedMaintenance(sources: readonly ((db: Connection) => Model<any>)[]): MaintenanceHook {
  return async ({ db, now }) => {
    const cutoff = new Date(now.getTime() - REPAIR_AFTER_MS);
    const stale = await db.collection<MarkerDoc>(MARKERS).find({ at: { $lt: cutoff } }, { projection: { workspace: 1 } }).limit(200).toArray();
    let repaired = 0;
    for (const workspace of new Set(stale.map((m) => m.workspace))) repaired += await repairDerived(db, workspace, sources.map((s) => s(db)), now);
    return repaired;
  };
}
