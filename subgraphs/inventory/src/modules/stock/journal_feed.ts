import { clampLimit, modelOn, OrderedFeed, ORDERED_FEED_FIELDS, type OrderedFeedDoc, type SourceReader } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { JournalLine } from './journal.ts';
import type { MovementDoc, MovementType } from './model.ts';

/**
 * Inventory's journal feed (ARCHITECTURE.md, "Inventory: the seventh subgraph"): the entries the
 * movements ask the finance journal to hold (cost of sales, count and adjustment differences,
 * write-downs, revaluations), one feed document per entry (`_id` = the entry's id, `je_<movement
 * id>`), in the order they became final — the shared ordered feed (shared ordered-feed.ts), as
 * payroll's. Finance pulls it (`inventory_journal_since`) with the read-only service assertion and
 * writes each entry once by id.
 *
 * When an entry is final: its movement is committed by the balance's one conditional update, which
 * lists the movement's insert among its pending writes (ledger.ts). Finishing that insert writes the
 * movement, then its feed document, then publishes it; the insert leaves the balance's pending list
 * only after all three, so a crash anywhere between is finished by the next change of the balance
 * or by the sweep — each step idempotent — and every entry gets its place exactly once.
 */
export interface FeedDoc extends OrderedFeedDoc {
  movement_id: string;
  kind: MovementType;
  date: string;
  currency: string;
  memo: string;
  lines: JournalLine[];
  created_at: Date;
}

const feedSchema = new Schema<FeedDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, movement_id: String, kind: String, date: String,
  currency: String, memo: String, lines: Schema.Types.Mixed, created_at: Date, ...ORDERED_FEED_FIELDS,
}, { versionKey: false });
feedSchema.index({ seq_key: 1 }, { unique: true, sparse: true });

/** The feed collection (`inventory_journal`). */
export function inventoryJournal(db: Connection): Model<FeedDoc> {
  return modelOn<FeedDoc>(db, 'InventoryJournal', feedSchema, 'inventory_journal');
}

/** The order finance reads inventory's entries in (heads in `inventory_journal_heads`). */
export const inventoryFeed = new OrderedFeed<FeedDoc>(inventoryJournal, 'inventory_journal_heads', 'inventory_journal_since');

/**
 * Writes a committed movement's entry in the feed (once: a retry finds it) and gives it its place.
 * Called between the movement's insert and its removal from the balance's pending writes.
 */
export async function publishMovementEntry(db: Connection, m: Pick<MovementDoc, '_id' | 'workspace' | 'type' | 'currency' | 'journal' | 'created_at'>): Promise<void> {
  if (!m.journal) return;
  const feed = inventoryJournal(db);
  if (!(await feed.exists({ _id: m.journal.id }))) {
    await feed.create({ _id: m.journal.id, workspace: m.workspace, movement_id: m._id, kind: m.type, date: m.journal.date, currency: m.currency, memo: m.journal.memo, lines: m.journal.lines, created_at: m.created_at })
      .catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  }
  await inventoryFeed.publish(db, m.workspace, m.journal.id);
}

/**
 * records.list `inventory_journal_since` (a feed, service to service): the entries made final after
 * the cursor in the order they became final (`seq`, oldest first) — `{id, movement_id, kind, date,
 * currency, memo, lines, total_debit, total_credit, seq}`, `lines` `{account, name, debit, credit}`
 * on PUC accounts, balanced. Without a cursor, from the first; `next_cursor` is where the next read
 * starts; fewer than `limit` rows means the reader is caught up.
 */
export const inventoryJournalSinceSource: SourceReader = async (q, ctx) => {
  const page = await inventoryFeed.since(ctx.db, ctx.workspace, q.cursor, clampLimit(q.limit));
  const rows = page.docs.map((d) => ({
    id: d._id, movement_id: d.movement_id, kind: d.kind, date: d.date, currency: d.currency, memo: d.memo, lines: d.lines,
    total_debit: d.lines.reduce((s, l) => s + l.debit, 0), total_credit: d.lines.reduce((s, l) => s + l.credit, 0), seq: d.seq ?? null,
  }));
  return { rows, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
};
