import { calendarDays, readByKeys } from '@cuadra/shared';
import type { Connection } from 'mongoose';

/** One index document: the ids of a workspace's open documents falling due on one day. */
export interface DueIndexDoc {
  _id: string;
  workspace: string;
  date: string;
  ids: string[];
  /**
   * Set on every add when the index watches for due dates passing ({@link DueIndex} `watchOverdue`):
   * the day has ids whose passing was not noted yet. Cleared once each id of the day is noted
   * (`noted`) or no longer open there.
   */
  watch?: boolean;
  /** The ids whose due date passing on this day was noted (the event recorded). */
  noted?: string[];
}

/** A document an agenda lane lists: its id and due date (what the index is keyed by). */
export interface DueDated {
  _id: string;
  due_date: string;
}

/**
 * The workspace key of an index kept over every workspace (`*|<date>`): what a background sweep
 * reads by due day without knowing the workspaces (the ids are documents' `_id`s, unique across them).
 */
export const EVERY_WORKSPACE = '*';

/** At most this many documents read by id per round while filling a lane's page. */
const READ_CHUNK = 200;

/**
 * An index of open documents by (workspace, due date), kept in its own collection and read by
 * `_id` only: the store builds no non-unique index (INFRA.md), so a range query on the documents
 * themselves scans them all. One document per day, `_id` `<workspace>|<date>`, holding the ids.
 *
 * The order of writes is what keeps it right without transactions: an id is added
 * ({@link DueIndex.add}, `$addToSet`) BEFORE the document becomes open and pulled
 * ({@link DueIndex.pull}) AFTER it stops being open. A crash between the two steps can only leave
 * an extra id — never a missing one — and {@link DueIndex.read} re-reads the documents by `_id`
 * and keeps the ones the caller says are open, so an extra id costs one read and shows nothing.
 * Written for the payables lane (bills); the receivables lane (invoices) has the same shape and
 * can take it with its own collection.
 */
export class DueIndex {
  readonly collection: string;
  readonly #watchOverdue: boolean;

  /** `watchOverdue`: every add marks its day as watched, for {@link DueIndex.watchedBefore}. */
  constructor(collection: string, options: { watchOverdue?: boolean } = {}) {
    this.collection = collection;
    this.#watchOverdue = options.watchOverdue ?? false;
  }

  private coll(db: Connection) {
    return db.collection<DueIndexDoc>(this.collection);
  }

  static key(workspace: string, date: string): string {
    return `${workspace}|${date}`;
  }

  /** Adds an id to its day (idempotent). Call before the document becomes open. */
  async add(db: Connection, workspace: string, date: string, id: string): Promise<void> {
    const filter = { _id: DueIndex.key(workspace, date) };
    const update = { $addToSet: { ids: id }, $setOnInsert: { workspace, date }, ...this.#watch() };
    try {
      await this.coll(db).updateOne(filter, update, { upsert: true });
    } catch (err) {
      // Two first adds to one day raced on the upsert: the day exists now, add again.
      if ((err as { code?: number }).code !== 11000) throw err;
      await this.coll(db).updateOne(filter, update, { upsert: true });
    }
  }

  /** Adds many ids at once, grouped by day (the backfill). */
  async addMany(db: Connection, entries: { workspace: string; date: string; id: string }[]): Promise<void> {
    const byDay = new Map<string, { workspace: string; date: string; ids: string[] }>();
    for (const e of entries) {
      const key = DueIndex.key(e.workspace, e.date);
      const day = byDay.get(key) ?? { workspace: e.workspace, date: e.date, ids: [] };
      day.ids.push(e.id);
      byDay.set(key, day);
    }
    for (const [key, day] of byDay) {
      await this.coll(db).updateOne({ _id: key }, { $addToSet: { ids: { $each: day.ids } }, $setOnInsert: { workspace: day.workspace, date: day.date }, ...this.#watch() }, { upsert: true });
    }
  }

  #watch(): { $set?: { watch: true } } {
    return this.#watchOverdue ? { $set: { watch: true } } : {};
  }

  /**
   * Watched days before `before` (YYYY-MM-DD), at most `limit`: the days with ids whose passing
   * was not noted yet. Only watched days are read, so the cost follows what is still to note,
   * not how many documents were ever due.
   */
  async watchedBefore(db: Connection, before: string, limit: number): Promise<DueIndexDoc[]> {
    return this.coll(db).find({ watch: true, date: { $lt: before } }).limit(limit).toArray() as Promise<DueIndexDoc[]>;
  }

  /** Notes that `id`'s due date passing on `date` was recorded (idempotent). */
  async noted(db: Connection, workspace: string, date: string, id: string): Promise<void> {
    await this.coll(db).updateOne({ _id: DueIndex.key(workspace, date) }, { $addToSet: { noted: id } });
  }

  /**
   * Stops watching a day once every id it holds now is settled (`settled`: noted, or no longer
   * open there). Conditional on the ids read: an add since then (a new document due that day)
   * keeps the day watched.
   */
  async unwatch(db: Connection, day: DueIndexDoc): Promise<void> {
    await this.coll(db).updateOne({ _id: day._id, ids: day.ids, watch: true }, { $unset: { watch: 1 } });
  }

  /** Pulls an id from its day (idempotent). Call after the document is no longer open. */
  async pull(db: Connection, workspace: string, date: string, id: string): Promise<void> {
    await this.coll(db).updateOne({ _id: DueIndex.key(workspace, date) }, { $pull: { ids: id } });
  }

  /**
   * The open documents falling due from `from` to `to`, by due date then id, at most `limit`.
   * Reads the window's day documents by `_id` (one `$in` of at most the window's days), then the
   * documents by `_id` in chunks, in date order, until the page is full: `fetch` reads them and
   * `isOpen` keeps the open ones (what filters an id left by a crash). The cost depends on the
   * window and the page, not on how many documents the workspace holds.
   */
  async read<T extends DueDated>(
    db: Connection, workspace: string, from: string, to: string, limit: number,
    fetch: (ids: string[]) => Promise<T[]>, isOpen: (doc: NoInfer<T>) => boolean,
  ): Promise<T[]> {
    const keys = calendarDays(from, to).map((d) => DueIndex.key(workspace, d));
    // With the other reads of this turn (two lanes' windows of a dashboard share the command).
    const days = await readByKeys<DueIndexDoc>(db, this.collection, '_id', keys);
    days.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    const out: T[] = [];
    let pending: { id: string; date: string }[] = [];
    const flush = async () => {
      if (!pending.length) return;
      const wanted = new Map(pending.map((p) => [p.id, p.date]));
      pending = [];
      const found = await fetch([...wanted.keys()]);
      // Kept only where the document is open and still due on the day it was indexed under.
      const open = found.filter((doc) => wanted.get(doc._id) === doc.due_date && isOpen(doc));
      open.sort((a, b) => (a.due_date < b.due_date ? -1 : a.due_date > b.due_date ? 1 : a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
      out.push(...open);
    };
    for (const day of days) {
      for (const id of [...day.ids].sort()) pending.push({ id, date: day.date });
      if (pending.length >= Math.max(READ_CHUNK, limit - out.length)) {
        await flush();
        if (out.length >= limit) break;
      }
    }
    if (out.length < limit) await flush();
    return out.slice(0, limit);
  }
}
