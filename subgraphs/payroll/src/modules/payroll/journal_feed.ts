import { addPositions, clampLimit, createPositioned, localDate, pageNewestFirst, type SourceReader } from '@cuadra/shared';
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
  },
  { versionKey: false },
);
addPositions(feedSchema);

/** The feed collection (`payroll_journal`). */
export function payrollJournal(db: Connection): Model<FeedDoc> {
  return (db.models.PayrollJournal as Model<FeedDoc> | undefined) ?? db.model<FeedDoc>('PayrollJournal', feedSchema, 'payroll_journal');
}

/** Writes a feed document once (a retry finds it and writes nothing). */
async function record(db: Connection, doc: FeedDoc): Promise<void> {
  const model = payrollJournal(db);
  if (await model.exists({ _id: doc._id })) return;
  try {
    await createPositioned(model, doc);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
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
    lines: e.lines.map((l) => ({ ...l, debit: l.credit, credit: l.debit })),
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

/** A row of the `payroll_journal` source. */
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
