import { CuadraError, createPositioned, reversedLines } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { balances, journalEntries, LEDGER_ROLLUP_VERSION, ledgerDeltas, tidyLines, type EntrySource, type JournalEntryDoc, type JournalLine } from './journal.ts';
import { assertPeriodOpen } from './periods.ts';
import { pendingChanges } from './rollup-store.ts';
import { applyRollupIntent, markIntent, rollupIntent } from './rollup-intents.ts';
import { isJournalSource, REVERSAL_SOURCE } from './sources.ts';

/** What the books need of the caller: the workspace's database, the workspace, and the call's clock. */
export interface BooksContext {
  db: Connection;
  workspace: string;
  now: Date;
}

/**
 * An entry's heading. `id` is derived from what caused it (`je_<document id>`): a retried post,
 * or two writers racing, can never write a second entry.
 */
export interface EntryHeading {
  id: string;
  date: string;
  currency: string;
  memo: string;
}

/** How a posting behaves at the edges. */
export interface PostOptions {
  /** The year-end close and its reversal: they pass the guard while their own period is `closing`. */
  closingEntry?: boolean;
  /** How long a second writer of the same entry waits for the first to count it ({@link SETTLE_WAIT_MS}). */
  settleWaitMs?: number;
}

/**
 * Posts one journal entry, once. The one way anything reaches the journal: every module's
 * postings, reversals and feeds go through here, so the rules hold for all of them —
 * - the lines balance (Σ debits = Σ credits > 0, no negative line, no line on both sides);
 * - the source kind is declared by a module (books/sources.ts);
 * - nothing is dated in a closed period (books/periods.ts {@link assertPeriodOpen}, checked
 *   after the entry's marker is written, so a close that starts meanwhile waits for it);
 * - the entry is counted in the ledger rollups, which the statements read (never the journal):
 *   its rollup intent is written with it in one document and applied right after, or by the
 *   repair if the process dies first.
 *
 * A second post of the same `id` (a retry, a writer racing another) writes nothing and returns
 * once the first is counted, so whoever reads statements after either call sees it.
 */
export async function postEntry(ctx: BooksContext, source: EntrySource, lines: JournalLine[], heading: EntryHeading, options: PostOptions = {}): Promise<void> {
  const entry = entryOf(ctx, source, lines, heading);
  const model = journalEntries(ctx.db);
  if (await model.exists({ _id: entry._id })) return settleJournalEntry(ctx.db, entry._id, options.settleWaitMs);
  const intent = rollupIntent(ledgerDeltas(entry), entry.created_at);
  // The marker is written before the period is read: a close that starts meanwhile then sees
  // this entry in flight and waits for it (general-ledger.ts settleLedger) instead of missing it.
  await markIntent(ctx.db, entry.workspace, model, entry._id, intent);
  try {
    await assertPeriodOpen(ctx.db, entry.workspace, entry.date, options);
  } catch (err) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    throw err;
  }
  try {
    await createPositioned(model, { ...entry, pending_rollups: intent ? [intent] : [], pending_count: intent ? 1 : 0, rolled: LEDGER_ROLLUP_VERSION });
  } catch (err) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    if ((err as { code?: number }).code !== 11000) throw err;
    return settleJournalEntry(ctx.db, entry._id, options.settleWaitMs);
  }
  await applyRollupIntent(ctx.db, model, entry._id, entry.workspace, intent);
}

/** The entry {@link postEntry} writes, checked as it checks it (a declared source kind, balanced lines). */
function entryOf(ctx: BooksContext, source: EntrySource, lines: JournalLine[], heading: EntryHeading): JournalEntryDoc {
  if (!isJournalSource(source.kind)) throw new Error(`The journal source kind "${source.kind}" is declared by no module (journalSources in its manifest).`);
  if (!balances(lines)) throw new Error(`Journal entry ${heading.id} does not balance.`);
  return { _id: heading.id, workspace: ctx.workspace, date: heading.date, currency: heading.currency, memo: heading.memo, source, lines, created_at: ctx.now };
}

/** One record a dry run says would change (issue 39): its collection, id, the operation and the fields before and after. */
export interface RecordChange {
  source: string;
  id: string;
  op: 'insert' | 'update';
  before?: Record<string, unknown>;
  after: Record<string, unknown>;
}

/** A posting tool's dry run (its `preview`): the records that would change and the journal lines it would post. */
export interface PostingPreview extends Record<string, unknown> {
  changes: RecordChange[];
  journal_lines: JournalLine[];
}

/**
 * What {@link postEntry} would write, read only — a dry run's journal lines and the change they
 * make: the same checks (a declared source, balanced lines, an open period; a closed one refuses
 * `conflict` as the post would), nothing written. An entry already posted under `id` would be
 * written again by nobody: the caller's own refusal (the document is no longer a draft) comes first.
 */
export async function previewEntry(ctx: BooksContext, source: EntrySource, lines: JournalLine[], heading: EntryHeading, options: PostOptions = {}): Promise<RecordChange> {
  const entry = entryOf(ctx, source, lines, heading);
  await assertPeriodOpen(ctx.db, entry.workspace, entry.date, options);
  return { source: 'journal_entries', id: entry._id, op: 'insert', after: { date: entry.date, currency: entry.currency, memo: entry.memo, source: entry.source, lines: entry.lines } };
}

/** A reversing entry's heading and cause; every field has a default from the entry it reverses. */
export interface Reversal {
  /** Default `<entry id>_rev`. Older reversals keep the ids they were first written under. */
  id?: string;
  /** Default `Reversión: <the entry's memo>`. */
  memo?: string;
  /** Default `{kind: 'reversal', id: <entry id>}`; a year-end close's reversal stays a `closing` entry. */
  source?: EntrySource;
}

/**
 * Reverses a posted entry: a new entry dated `date` with every line of the original, debit and
 * credit swapped by {@link reversedLines} — the one place they swap (ERPNext's
 * `make_reverse_gl_entries`). The original is never touched; the reversal is posted by
 * {@link postEntry}, so it is written once, balanced, and refused in a closed period. Reading
 * the lines from the journal (not recomputing them) reverses exactly what was posted.
 *
 * @returns the reversing entry's id
 */
export async function reverseEntry(ctx: BooksContext, entryId: string, date: string, reversal: Reversal = {}, options: PostOptions = {}): Promise<string> {
  const r = await reversalOf(ctx, entryId, date, reversal);
  await postEntry(ctx, r.source, r.lines, r.heading, options);
  return r.heading.id;
}

/** What {@link reverseEntry} would post, read only: the reversing entry's change and lines (a dry run's). */
export async function previewReversal(ctx: BooksContext, entryId: string, date: string, reversal: Reversal = {}, options: PostOptions = {}): Promise<RecordChange> {
  const r = await reversalOf(ctx, entryId, date, reversal);
  return previewEntry(ctx, r.source, r.lines, r.heading, options);
}

/** The reversing entry of a posted one: its source, its lines (debit and credit swapped) and its heading. */
async function reversalOf(ctx: BooksContext, entryId: string, date: string, reversal: Reversal): Promise<{ source: EntrySource; lines: JournalLine[]; heading: EntryHeading }> {
  const original = await journalEntries(ctx.db).findOne({ _id: entryId, workspace: ctx.workspace }).lean();
  if (!original) throw new CuadraError('conflict', `The journal entry ${entryId} is not posted, so it cannot be reversed.`);
  return {
    source: reversal.source ?? { kind: REVERSAL_SOURCE, id: entryId },
    lines: reversedLines(original.lines),
    heading: { id: reversal.id ?? `${entryId}_rev`, date, currency: original.currency, memo: reversal.memo ?? `Reversión: ${original.memo}` },
  };
}

/** How a credit note's entry departs from its document's entry taken back ({@link creditNoteLines}). */
export interface TakenBack {
  /** Accounts booked elsewhere when taken back: a sale's income (413595) to 417505 devoluciones en ventas. */
  accounts?: Readonly<Record<string, { code: string; name: string }>>;
  /**
   * The party's account, taken back only up to what the credited document still had open
   * (`applied`); the rest is owed back to the party on `rest` (a customer's credit, 280505).
   */
  party?: { account: string; applied: number; rest: { code: string; name: string } };
}

/**
 * The entry of a credit note (a customer's or a vendor's): `documentLines` — the entry the
 * credited document's own builder makes for the note's lines — taken back, each line's debit and
 * credit swapped by {@link reversedLines} as {@link reverseEntry} swaps them, debits first, in the
 * accounts `takenBack` says; lines of one account, side and tags merged ({@link tidyLines}).
 */
export function creditNoteLines(documentLines: readonly JournalLine[], takenBack: TakenBack = {}): JournalLine[] {
  const swapped = reversedLines(documentLines).flatMap((l): JournalLine[] => {
    const moved = takenBack.accounts?.[l.account];
    if (moved) return [{ ...l, account: moved.code, name: moved.name }];
    const party = takenBack.party;
    if (!party || l.account !== party.account || l.credit === 0) return [l];
    return [{ ...l, credit: party.applied }, { ...l, account: party.rest.code, name: party.rest.name, credit: l.credit - party.applied }];
  });
  return tidyLines([...swapped.filter((l) => l.debit > 0), ...swapped.filter((l) => l.debit <= 0)]);
}

/** How long a second writer waits for the first to count an entry (ms). */
export const SETTLE_WAIT_MS = 5_000;

/**
 * Waits until a written entry's rollup intent is applied by the writer that holds it, so that who
 * wrote it a second time (a retry, a racing pull) reads statements that count it. It waits rather
 * than applying the intent itself: once the holder finishes, the marks that make a second
 * application harmless are forgotten (books/rollup-intents.ts applyRollupIntent), so two appliers could
 * count it twice. A holder that died leaves the intent to the repair (after REPAIR_AFTER_MS);
 * after `waitMs` ({@link SETTLE_WAIT_MS}) the second writer gives up with `conflict`, having
 * applied nothing — answering would show statements that do not count the entry yet.
 */
export async function settleJournalEntry(db: Connection, id: string, waitMs: number = SETTLE_WAIT_MS): Promise<void> {
  const model = journalEntries(db);
  const until = Date.now() + waitMs;
  for (;;) {
    const doc = await model.findById(id, { pending_count: 1 }).lean<{ pending_count?: number }>();
    if (!doc?.pending_count) return;
    if (Date.now() >= until) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new CuadraError('conflict', `The journal entry ${id} is still being counted by the call that wrote it; nothing was done. Retry in a moment.`);
}

