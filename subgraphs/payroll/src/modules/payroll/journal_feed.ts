import { addPositions, clampLimit, createPositioned, localDate, OrderedFeed, ORDERED_FEED_FIELDS, pageNewestFirst, reversedLines, type OrderedFeedDoc, type PeerGraph, type SourceReader } from '@cuadra/shared';
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
 * The order finance reads in (`payroll_journal_since`): the shared ordered feed (shared
 * ordered-feed.ts): each entry gets `seq`, its place in the order entries became final, once its
 * run has moved ({@link publish}), dense per workspace, so a reader that has seen n has seen every
 * entry up to n whatever order payroll's writers ran in. A feed document is put on the head's
 * pending list before its run moves, so an entry a crash left without `seq` is still answered.
 */
export interface FeedDoc extends OrderedFeedDoc {
  /** The finance journal entry's id: `je_<run id>` or `je_<run id>_void`. */
  _id: string;
  run_id: string;
  kind: 'posting' | 'reversal';
  date: string;
  currency: string;
  memo: string;
  lines: JournalLine[];
  created_at: Date;
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
    ...ORDERED_FEED_FIELDS,
  },
  { versionKey: false },
);
addPositions(feedSchema);
feedSchema.index({ seq_key: 1 }, { unique: true, sparse: true });

/** The feed collection (`payroll_journal`). */
export function payrollJournal(db: Connection): Model<FeedDoc> {
  return (db.models.PayrollJournal as Model<FeedDoc> | undefined) ?? db.model<FeedDoc>('PayrollJournal', feedSchema, 'payroll_journal');
}

/** The order finance reads payroll's entries in (shared ordered-feed.ts; heads in `payroll_journal_heads`). */
export const payrollFeed = new OrderedFeed<FeedDoc>(payrollJournal, 'payroll_journal_heads', 'payroll_journal_since');

/** The heads (`_id` = workspace). */
export function payrollJournalHeads(db: Connection) {
  return payrollFeed.heads(db);
}

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
  await payrollFeed.enqueue(db, doc.workspace, doc._id);
}

/**
 * Gives a final entry (its run has moved) its place in the order finance reads (shared
 * ordered-feed.ts). Idempotent. With a `graph`, finance is then told the workspace's feed grew
 * (`payrollJournalGrew`, a field only payroll's service assertion may ask): its background pull
 * takes the workspace in on its next pass, even one it holds no mark for yet. The hint is not
 * awaited and may be lost (finance down, a crash right here): that only delays the entry, never
 * loses it — it stays in this feed, taken in by finance's next read of its journal or statements
 * and, at the latest, before the month is closed.
 */
export async function publish(db: Connection, workspace: string, id: string, graph?: PeerGraph): Promise<void> {
  await payrollFeed.publish(db, workspace, id);
  if (graph) void graph('invoices', 'query { payrollJournalGrew }', {}).catch(() => undefined);
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
  const page = await payrollFeed.since(ctx.db, ctx.workspace, q.cursor, clampLimit(q.limit));
  const ids = [...new Set(page.docs.map((d) => d.run_id))];
  const runs = ids.length ? await payrollRuns(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace }, { status: 1, posted_at: 1 }).lean() : [];
  const byId = new Map(runs.map((r) => [r._id, r]));
  const rows = page.docs.filter((d) => live(d, byId.get(d.run_id))).map((d) => ({ ...feedRow(d), seq: d.seq ?? null }));
  return { rows, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
};
