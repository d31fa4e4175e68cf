import type { Connection, Model } from 'mongoose';
import { decodeCursor, encodeCursor } from './paging.ts';

/**
 * An ordered feed one subgraph publishes and another pulls, exactly once and in order (payroll's
 * journal entries and inventory's, which the finance journal takes in; ARCHITECTURE.md, "Inventory:
 * the seventh subgraph", and "Payroll postings"). The publisher writes its feed documents in a collection of its own; this gives them
 * their place in the order they became final and answers the reader everything after a cursor.
 *
 * Why not the documents' positions: a position is taken before its document is written, so
 * positions do not follow the order in which entries become final (two writers at once, a crash
 * between the writes): a reader's "newest position seen" would skip the slower one. So each entry
 * gets `seq`, its place in the order entries became final ({@link OrderedFeed.publish}): dense
 * (1, 2, 3 … per workspace, no holes) and set on a document only when `seq − 1` is already set on
 * another (the head `h` of the heads collection moves to `n` only once `n` is set; a publisher sets
 * `h + 1`; the unique `seq_key` refuses a second `h + 1`). A reader that has seen `seq` n has
 * therefore seen, or can read, every entry up to n, whatever order the writers ran in.
 *
 * An entry that became final but that a crash left without `seq`: a publisher that cannot redo
 * `publish` from its own state puts the entry on the head's `pending` list first
 * ({@link OrderedFeed.enqueue}, before the entry becomes final), and {@link OrderedFeed.since}
 * answers the pending ones on every read, so none is ever left behind. A publisher whose own
 * commit point keeps the step to redo (inventory: the balance's pending writes) only publishes.
 */
export interface OrderedFeedDoc {
  _id: string;
  workspace: string;
  /** Place in the order entries became final; absent until published. */
  seq?: number;
  /** `<workspace>|<seq>`, unique (sparse): what {@link OrderedFeed.since} looks entries up by. */
  seq_key?: string;
}

/** A workspace's head of the final order: the last `seq` set, and the entries waiting for theirs. */
interface HeadDoc { _id: string; head: number; pending: string[] }

/** What {@link OrderedFeed.since} answers: the documents in order, then the pending ones, and where the next read starts. */
export interface OrderedPage<T> {
  /** Sequenced documents after the cursor (oldest first), then pending ones without their place (`seq` absent or above the head). */
  docs: T[];
  /** Always set once the feed has an entry: pass it back unchanged. */
  next_cursor?: string;
}

const seqKey = (workspace: string, seq: number) => `${workspace}|${seq}`;

/**
 * One ordered feed: its documents' model (whose schema has `seq` and a unique sparse index on
 * `seq_key`, see {@link ORDERED_FEED_FIELDS}), its heads collection and its cursor series.
 */
export class OrderedFeed<T extends OrderedFeedDoc> {
  private readonly model: (db: Connection) => Model<T>;
  private readonly headsName: string;
  /** The cursor series (cursors of one feed are refused by another). */
  private readonly series: string;

  constructor(model: (db: Connection) => Model<T>, headsName: string, series: string) {
    this.model = model;
    this.headsName = headsName;
    this.series = series;
  }

  /** The heads collection (`_id` = workspace). */
  heads(db: Connection) {
    return db.collection<HeadDoc>(this.headsName);
  }

  /** Puts an entry on its workspace's pending list (before it becomes final; see the top of this file). Idempotent. */
  async enqueue(db: Connection, workspace: string, id: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.heads(db).updateOne({ _id: workspace }, { $addToSet: { pending: id }, $setOnInsert: { head: 0 } }, { upsert: true });
        return;
      } catch (err) {
        // Two first upserts at once: the loser finds the head the winner created.
        if ((err as { code?: number }).code !== 11000 || attempt >= 3) throw err;
      }
    }
  }

  /**
   * Gives a final entry its `seq`: the head's next, set only when the head's own is set, then
   * moves the head to it and takes the entry off the pending list. Idempotent: an entry that has
   * its `seq` keeps it (a retry only finishes moving the head). An entry not written yet: nothing.
   */
  async publish(db: Connection, workspace: string, id: string): Promise<void> {
    const feed = this.model(db);
    const heads = this.heads(db);
    for (let attempt = 0; attempt < 1_000; attempt++) {
      const [doc, current] = await Promise.all([feed.findOne({ _id: id, workspace } as never, { seq: 1 }).lean<Pick<T, 'seq'>>(), heads.findOne({ _id: workspace })]);
      if (!doc) return;
      const h = current?.head ?? 0;
      if (typeof doc.seq === 'number') {
        // Set when the head was seq − 1; the head moves to it (once), then the entry is no longer pending.
        if (h < doc.seq) {
          await this.#moveHead(db, workspace, h, doc.seq);
          continue;
        }
        if (current?.pending?.includes(id)) await heads.updateOne({ _id: workspace }, { $pull: { pending: id } });
        return;
      }
      try {
        await feed.updateOne({ _id: id, seq: { $exists: false } } as never, { $set: { seq: h + 1, seq_key: seqKey(workspace, h + 1) } } as never);
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
        // Another entry took h + 1 and its publisher has not moved the head yet: move it for them.
        await this.#moveHead(db, workspace, h, h + 1);
      }
      if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
    }
    throw new Error(`${this.series} ${workspace}: no seq for ${id} after 1,000 attempts`);
  }

  /** Moves the head from `from` to `to` (conditional on `from`; the first head of a workspace is created at `to`). */
  async #moveHead(db: Connection, workspace: string, from: number, to: number): Promise<void> {
    const heads = this.heads(db);
    const moved = await heads.updateOne({ _id: workspace, head: from }, { $set: { head: to } });
    if (moved.matchedCount === 0 && from === 0) {
      await heads.insertOne({ _id: workspace, head: to, pending: [] }).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
    }
  }

  /**
   * The entries made final after the cursor, in the order they became final (oldest first), then
   * the pending entries (a crash left them without their place). Without a cursor, from the first.
   * At most `limit` sequenced entries; fewer means the reader is caught up. A read with nothing new
   * is the head and nothing else.
   */
  async since(db: Connection, workspace: string, cursor: string | undefined, limit: number): Promise<OrderedPage<T>> {
    const after = cursor ? decodeCursor(this.series, workspace, cursor) : 0;
    const current = await this.heads(db).findOne({ _id: workspace });
    const head = current?.head ?? 0;
    const top = Math.min(head, after + limit);
    const keys = Array.from({ length: Math.max(0, top - after) }, (_, i) => seqKey(workspace, after + 1 + i));
    const feed = this.model(db);
    const sequenced = keys.length ? await feed.find({ seq_key: { $in: keys } } as never).lean<T[]>() : [];
    const pending = current?.pending?.length ? await feed.find({ _id: { $in: current.pending }, workspace } as never).lean<T[]>() : [];
    // Pending: no seq yet, or a seq the head has not reached (its publisher died between the two
    // writes; the next publish moves the head past it, and it is read again then, once more by id).
    const docs = [...sequenced.filter((d) => d.workspace === workspace).sort((a, b) => a.seq! - b.seq!), ...pending.filter((d) => typeof d.seq !== 'number' || d.seq > head)];
    const through = Math.max(after, top);
    return { docs, ...(through > 0 ? { next_cursor: encodeCursor(this.series, workspace, through) } : {}) };
  }
}

/** The schema fields every ordered feed's documents carry (add them, and a unique sparse index on `seq_key`). */
export const ORDERED_FEED_FIELDS = { seq: { type: Number }, seq_key: { type: String } } as const;
