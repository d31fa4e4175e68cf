import { addPositions, clampLimit, createPositioned, decodeCursor, encodeCursor, localDate, pageNewestFirst, reversedLines, type SourceReader } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { payrollRuns, type JournalLine, type RunDoc } from './runs.ts';

/**
 * Payroll's journal feed (ARCHITECTURE.md, "Payroll postings"): the entries payroll asks the
 * finance journal (invoices subgraph) to hold — a posted run's entry `je_<run id>` and, when a
 * posted run is voided, its reversal `je_<run id>_void`. The finance journal *pulls* them through
 * payroll's graph (records source `payroll_journal`) with the read-only service assertion and
 * writes each once, keyed by its id; payroll never writes finance's collections.
 *
 * Crash safety: the feed document is written *before* the run's conditional transition, and the
 * source shows it only once the run's state says it happened (a posting once the run has
 * `posted_at`, a reversal once a posted run is void). A crash between the two leaves an
 * invisible feed document that the retried call (or nothing) completes — never an entry in the
 * finance journal without its posted run, nor a posted run whose entry never reaches it.
 *
 * What a row is (the contract the finance journal's pull relies on, invoices accounting/payroll_pull.ts):
 * `{id, run_id, kind, date, currency, memo, lines, total_debit, total_credit, created_at}` (and `seq`
 * on the `_since` feed); `lines` are `{account, name, debit, credit, party_id}` on PUC sub-accounts
 * (digits), each named, each amount a non-negative integer on one side only, Σ debits = Σ credits.
 * Every entry payroll makes keeps that shape: a month's pay, and a final settlement too (issue 30:
 * 2610xx debits for the provisions released, 510560 for an indemnity, the group-25 payables
 * 251010, 251505, 252005, 252505, 254005 credited) — finance needs to know no payroll concept.
 *
 * The order finance reads in (`payroll_journal_since`): a feed document's position is taken
 * before it is written and before its run moves, so positions do not follow the order in which
 * entries become final (a run recorded early and posted late, two posts at once, a crash between
 * the two writes): a reader's "newest position seen" would skip the slower one. So each entry also
 * gets `seq`, its place in the order entries became final, once its run has moved
 * ({@link publish}): dense (1, 2, 3 … per workspace, no holes) and set on a document only when
 * `seq − 1` is already set on another (the head `h` of `payroll_journal_heads` moves to `n` only
 * once `n` is set; a publisher sets `h + 1`; the unique `seq_key` refuses a second `h + 1`). A
 * reader that has seen `seq` n has therefore seen, or can read, every entry up to n, whatever
 * order the writers ran in. An entry whose run moved but which a crash left without `seq` stays on
 * the head's `pending` list (put there before the run moves); the feed answers the pending ones
 * that are final on every read, so none is ever left behind.
 */
export interface FeedDoc {
  /** The finance journal entry's id: `je_<run id>` or `je_<run id>_void`. */
  _id: string;
  workspace: string;
  run_id: string;
  kind: 'posting' | 'reversal';
  date: string;
  currency: string;
  memo: string;
  lines: JournalLine[];
  created_at: Date;
  /** Place in the order entries became final (see above); absent until {@link publish}. */
  seq?: number;
  /** `<workspace>|<seq>`, unique: what `payroll_journal_since` looks entries up by. */
  seq_key?: string;
}

const feedSchema = new Schema<FeedDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    run_id: { type: String, required: true },
    kind: { type: String, required: true },
    date: { type: String, required: true },
    currency: { type: String, required: true },
    memo: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    created_at: { type: Date, required: true },
    seq: { type: Number },
    seq_key: { type: String },
  },
  { versionKey: false },
);
addPositions(feedSchema);
feedSchema.index({ seq_key: 1 }, { unique: true, sparse: true });

/** The feed collection (`payroll_journal`). */
export function payrollJournal(db: Connection): Model<FeedDoc> {
  return (db.models.PayrollJournal as Model<FeedDoc> | undefined) ?? db.model<FeedDoc>('PayrollJournal', feedSchema, 'payroll_journal');
}

/** A workspace's head of the final order: the last `seq` set, and the entries waiting for theirs. */
interface HeadDoc { _id: string; head: number; pending: string[] }

/** The heads (`_id` = workspace). */
export function payrollJournalHeads(db: Connection) {
  return db.collection<HeadDoc>('payroll_journal_heads');
}

const seqKey = (workspace: string, seq: number) => `${workspace}|${seq}`;
/** The cursor series of `payroll_journal_since`. */
const SINCE_SERIES = 'payroll_journal_since';

/**
 * Writes a feed document once (a retry finds it and writes nothing) and puts it on the
 * workspace's pending list, both before the run moves (see above).
 */
async function record(db: Connection, doc: FeedDoc): Promise<void> {
  const model = payrollJournal(db);
  if (!(await model.exists({ _id: doc._id }))) {
    try {
      await createPositioned(model, doc);
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await payrollJournalHeads(db).updateOne({ _id: doc.workspace }, { $addToSet: { pending: doc._id }, $setOnInsert: { head: 0 } }, { upsert: true });
      return;
    } catch (err) {
      // Two first upserts at once: the loser finds the head the winner created.
      if ((err as { code?: number }).code !== 11000 || attempt >= 3) throw err;
    }
  }
}

/**
 * Gives a final entry (its run has moved) its `seq`: the head's next, set only when the head's
 * own is set (see above), then moves the head to it and takes the entry off the pending list.
 * Idempotent: an entry that has its `seq` keeps it (a retry only finishes moving the head).
 */
export async function publish(db: Connection, workspace: string, id: string): Promise<void> {
  const feed = payrollJournal(db);
  const heads = payrollJournalHeads(db);
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const [doc, current] = await Promise.all([feed.findOne({ _id: id, workspace }, { seq: 1 }).lean(), heads.findOne({ _id: workspace })]);
    if (!doc) return;
    const h = current?.head ?? 0;
    if (typeof doc.seq === 'number') {
      // Set when the head was seq − 1; the head moves to it (once), then the entry is no longer pending.
      if (h < doc.seq) {
        await heads.updateOne({ _id: workspace, head: h }, { $set: { head: doc.seq } });
        continue;
      }
      await heads.updateOne({ _id: workspace }, { $pull: { pending: id } });
      return;
    }
    try {
      await feed.updateOne({ _id: id, seq: { $exists: false } }, { $set: { seq: h + 1, seq_key: seqKey(workspace, h + 1) } });
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
      // Another entry took h + 1 and its publisher has not moved the head yet: move it for them.
      await heads.updateOne({ _id: workspace, head: h }, { $set: { head: h + 1 } });
    }
    if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
  }
  throw new Error(`payroll journal ${workspace}: no seq for ${id} after 1,000 attempts`);
}

/** The feed document of a run's posting: the run's own entry. */
export function recordPosting(db: Connection, run: RunDoc, now: Date): Promise<void> {
  const e = run.journal_entry;
  return record(db, { _id: e.id, workspace: run.workspace, run_id: run._id, kind: 'posting', date: e.date, currency: e.currency, memo: e.memo, lines: e.lines, created_at: now });
}

/**
 * The reversal of a posted run's entry: every debit and credit swapped, dated the day of the void
 * (never before the original's date).
 */
export function reversalOf(run: RunDoc, now: Date): Omit<FeedDoc, 'workspace' | 'run_id' | 'kind' | 'created_at'> {
  const e = run.journal_entry;
  const today = localDate(now);
  return {
    _id: `${e.id}_void`,
    date: today > e.date ? today : e.date,
    currency: e.currency,
    memo: `Anulación de la nómina ${run.period.from} – ${run.period.to}`,
    lines: reversedLines(e.lines),
  };
}

/** The feed document of voiding a posted run. */
export function recordReversal(db: Connection, run: RunDoc, now: Date): Promise<void> {
  return record(db, { ...reversalOf(run, now), workspace: run.workspace, run_id: run._id, kind: 'reversal', created_at: now });
}

/** Whether the run's state says the feed document happened. */
function live(doc: FeedDoc, run: Pick<RunDoc, 'status' | 'posted_at'> | undefined): boolean {
  if (!run || !run.posted_at) return false;
  return doc.kind === 'posting' || run.status === 'void';
}

/** A row of the `payroll_journal` source (and of `payroll_journal_since`, with its `seq`). */
export function feedRow(d: FeedDoc) {
  return {
    id: d._id, run_id: d.run_id, kind: d.kind, date: d.date, currency: d.currency, memo: d.memo, lines: d.lines,
    total_debit: d.lines.reduce((s, l) => s + l.debit, 0), total_credit: d.lines.reduce((s, l) => s + l.credit, 0),
    created_at: d.created_at.toISOString(),
  };
}

/**
 * records.list `payroll_journal`: the journal entries payroll's postings and voids made final,
 * newest first (a posted run's entry, and the reversal of a posted run voided), each balanced on
 * PUC accounts. The finance journal reads it to write them (invoices accounting/payroll_pull.ts).
 * No kind, status or search. A page reads the feed by position and the runs of its rows by id;
 * entries not yet final are left out, so a page may be short and still carry `next_cursor`.
 */
export const payrollJournalSource: SourceReader = async (q, ctx) => {
  const page = await pageNewestFirst<FeedDoc>(payrollJournal(ctx.db), { workspace: ctx.workspace, cursor: q.cursor, limit: clampLimit(q.limit) });
  const ids = [...new Set(page.rows.map((d) => d.run_id))];
  const runs = ids.length
    ? await payrollRuns(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace }, { status: 1, posted_at: 1 }).lean()
    : [];
  const byId = new Map(runs.map((r) => [r._id, r]));
  const rows = page.rows.filter((d) => live(d, byId.get(d.run_id))).map(feedRow);
  return { rows, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
};

/**
 * records.list `payroll_journal_since` (a feed, service to service): the entries made final after
 * the cursor, in the order they became final (`seq`, oldest first; see the top of this file), then
 * the pending entries that are final (a crash left them without `seq`; `seq` null). Without a
 * cursor, from the first. `next_cursor` is always answered: where the next read starts (an empty
 * page means nothing new). A page holds at most `limit` sequenced entries; fewer means the reader
 * is caught up. A read with nothing new is the head and nothing else.
 */
export const payrollJournalSinceSource: SourceReader = async (q, ctx) => {
  const after = q.cursor ? decodeCursor(SINCE_SERIES, ctx.workspace, q.cursor) : 0;
  const limit = clampLimit(q.limit);
  const current = await payrollJournalHeads(ctx.db).findOne({ _id: ctx.workspace });
  const top = Math.min(current?.head ?? 0, after + limit);
  const keys = Array.from({ length: Math.max(0, top - after) }, (_, i) => seqKey(ctx.workspace, after + 1 + i));
  const feed = payrollJournal(ctx.db);
  const sequenced = keys.length ? await feed.find({ seq_key: { $in: keys } }).lean() : [];
  const pending = current?.pending?.length ? await feed.find({ _id: { $in: current.pending }, workspace: ctx.workspace }).lean() : [];
  // Pending: no seq yet, or a seq the head has not reached (its publisher died between the two writes;
  // the next publish moves the head past it, and it is read again then, once more by id).
  const head = current?.head ?? 0;
  const docs = [...sequenced.filter((d) => d.workspace === ctx.workspace).sort((a, b) => a.seq! - b.seq!), ...pending.filter((d) => typeof d.seq !== 'number' || d.seq > head)];
  const ids = [...new Set(docs.map((d) => d.run_id))];
  const runs = ids.length ? await payrollRuns(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace }, { status: 1, posted_at: 1 }).lean() : [];
  const byId = new Map(runs.map((r) => [r._id, r]));
  const rows = docs.filter((d) => live(d, byId.get(d.run_id))).map((d) => ({ ...feedRow(d), seq: d.seq ?? null }));
  const through = Math.max(after, top);
  return { rows, ...(through > 0 ? { next_cursor: encodeCursor(SINCE_SERIES, ctx.workspace, through) } : {}) };
};
