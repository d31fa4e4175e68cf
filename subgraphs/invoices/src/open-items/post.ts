import { CuadraError, newId, REPAIR_AFTER_MS, type ToolContext } from '@cuadra/shared';
import { postEntry, previewEntry, type EntryHeading, type EntrySource, type JournalLine, type PostingPreview } from '../books/index.ts';
import { assertPeriodOpen } from '../books/periods.ts';
import { pendingChanges } from '../books/rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, rollupIntent, type RollupDelta } from '../books/rollup-intents.ts';
import type { OpenItemDoc, OpenItemLedger } from './item.ts';

/** What posting one document books: its journal entry, the fields it sets and the rollups it moves. */
export interface Booking<D> {
  source: EntrySource;
  lines: JournalLine[];
  heading: EntryHeading & { id: string };
  /** Fields set beside `status: posted`, the entry's id, the time and the released lock. */
  set?: Partial<D>;
  deltas: RollupDelta[];
}

/** How one kind of document is posted; the engine holds the order and the lock. */
export interface Posting<D> {
  /** More the draft must match to be locked (a vendor's credit note is applied, never posted). */
  lockFilter?: Record<string, unknown>;
  /** Why a draft could not be locked, from the document as it is now (null: not in the workspace). */
  refusal(doc: D | null, id: string): CuadraError;
  /** Steps on the locked draft before its entry (the invoices' number, a credit note's application); each must be idempotent. */
  prepare?(locked: D, lockId: string): Promise<D>;
  /** The entry, fields and rollups of the prepared draft. */
  booking(doc: D): Promise<Booking<D>>;
  /** The refusal when another post took the draft over meanwhile. */
  takenOver(doc: D): string;
}

/**
 * Posts a draft open item, exactly once:
 * 1. refused in a closed period before anything is taken (postEntry holds the rule: books/post.ts);
 * 2. takes the post lock (conditional update: draft and unlocked, or locked by a process dead for
 *    longer than REPAIR_AFTER_MS, the one repair wait);
 * 3. the kind's own steps on the locked draft (`prepare`);
 * 4. writes the journal entry (its id is derived from the document: a retry or a takeover cannot add a second);
 * 5. indexes it by due date before it is open, then the final conditional update draft → posted on
 *    the lock, carrying the rollup intent — a post that fails after 4 leaves an entry the retry
 *    finds written, and at most an extra id in the due index the lane filters out.
 */
export async function postOpenItem<D extends OpenItemDoc & { issue_date: string }>(
  ctx: ToolContext,
  ledger: OpenItemLedger<D>,
  id: string,
  posting: Posting<D>,
): Promise<D> {
  const model = ledger.model(ctx.db);
  const draft = (await model.findOne({ _id: id, workspace: ctx.workspace }, { issue_date: 1 }).lean()) as Pick<D, 'issue_date'> | null;
  if (draft) await assertPeriodOpen(ctx.db, ctx.workspace, draft.issue_date);
  const lockId = newId('lock');
  const locked = (await model.findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, status: 'draft', ...posting.lockFilter, $or: [{ post_lock: null }, { 'post_lock.at': { $lt: new Date(ctx.now.getTime() - REPAIR_AFTER_MS) } }] },
    { $set: { post_lock: { id: lockId, at: ctx.now } } },
    { returnDocument: 'after' },
  ).lean()) as D | null;
  if (!locked) throw posting.refusal((await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null, id);
  const doc = posting.prepare ? await posting.prepare(locked, lockId) : locked;
  const booking = await posting.booking(doc);
  await postEntry(ctx, booking.source, booking.lines, booking.heading);
  const intent = rollupIntent(booking.deltas, ctx.now);
  const counted = intentUpdate(intent);
  if (ledger.isOpen({ ...doc, status: 'posted' })) await ledger.due.add(ctx.db, ctx.workspace, doc.due_date, doc._id);
  await markIntent(ctx.db, ctx.workspace, model, id, intent);
  const posted = (await model.findOneAndUpdate(
    { _id: id, 'post_lock.id': lockId, status: 'draft' },
    {
      $set: { ...booking.set, status: 'posted', journal_entry_id: booking.heading.id, post_lock: null, posted_at: ctx.now, updated_at: ctx.now },
      $inc: { rev: 1, ...counted.$inc }, ...(counted.$push ? { $push: counted.$push } : {}),
    },
    { returnDocument: 'after' },
  ).lean()) as D | null;
  if (!posted) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    throw new CuadraError('conflict', posting.takenOver(doc));
  }
  await applyRollupIntent(ctx.db, model, id, ctx.workspace, intent);
  return posted;
}

/**
 * What {@link postOpenItem} would do, read only — a dry run, and what a held post shows the person
 * deciding: the same refusal (`posting.refusal` when the document is no draft matching
 * `lockFilter`), the same `booking` and its entry checked as the post checks it (a declared source,
 * balanced lines, an open period: books' previewEntry), nothing written. Only a kind whose
 * `booking` reads and never writes previews this way (bills); one whose booking writes (an
 * invoices' credit note is applied there) previews itself.
 */
export async function previewOpenItemPost<D extends OpenItemDoc & { issue_date: string }>(
  ctx: ToolContext,
  ledger: OpenItemLedger<D>,
  id: string,
  posting: Pick<Posting<D>, 'lockFilter' | 'refusal' | 'booking'>,
): Promise<PostingPreview> {
  const model = ledger.model(ctx.db);
  const draft = (await model.findOne({ _id: id, workspace: ctx.workspace, status: 'draft', ...posting.lockFilter }).lean()) as D | null;
  if (!draft) throw posting.refusal((await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null, id);
  const booking = await posting.booking(draft);
  const entry = await previewEntry(ctx, booking.source, booking.lines, booking.heading);
  return {
    changes: [
      {
        source: model.collection.collectionName, id, op: 'update',
        before: { status: 'draft', journal_entry_id: null },
        after: { ...booking.set, status: 'posted', journal_entry_id: booking.heading.id, balance: draft.balance, due_date: draft.due_date },
      },
      entry,
    ],
    journal_lines: booking.lines,
  };
}
