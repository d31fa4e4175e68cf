import { beginOperation, CuadraError, defineOperation, dropOperation, isCuadraError, runOperation, takeOverOperation, type OperationContext, type OperationKind, type ToolContext } from '@cuadra/shared';
import type { Model } from 'mongoose';
import { postEntry, previewEntry, type EntryHeading, type EntrySource, type JournalLine, type PostingPreview } from '../books/index.ts';
import { assertPeriodOpen } from '../books/periods.ts';
import { pendingChanges } from '../books/rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, rollupIntent, type RollupDelta } from '../books/rollup-intents.ts';
import { addSearchGrams, addToDue, type OpenItemDoc, type OpenItemLedger, type PostClaim } from './item.ts';
import { holdStock, publishStockDocument, releaseStock, type StockDocument } from './stock.ts';

/** What posting one document books: its journal entry, the fields it sets and the rollups it moves. */
export interface Booking<D> {
  source: EntrySource;
  lines: JournalLine[];
  heading: EntryHeading & { id: string };
  /** Fields set beside `status: posted`, the entry's id and the time. */
  set?: Partial<D>;
  deltas: RollupDelta[];
}

/** What a post's steps run with: the operation's context and the claim stored on the draft. */
export interface PostContext extends OperationContext {
  claim: PostClaim;
}

/** How one kind of document is posted; the engine holds the order. Every function may run again (a repair) on what the last run left. */
export interface Posting<D> {
  /** More the draft must match to be posted (a vendor's credit note is applied, never posted). */
  claimFilter?: Record<string, unknown>;
  /** Why a draft could not be taken, from the document as it is now (null: not in the workspace). */
  refusal(doc: D | null, id: string): CuadraError;
  /** Steps on the claimed draft before its entry (the invoices' number, a credit note's application); each must be idempotent. */
  prepare?(ctx: PostContext, claimed: D): Promise<D>;
  /** The entry, fields and rollups of the prepared draft. */
  booking(ctx: PostContext, doc: D): Promise<Booking<D>>;
  /** A last step on the posted document (a credit note's customer credit); idempotent, it may run again on a document posted long ago. */
  after?(ctx: PostContext, posted: D): Promise<void>;
  /**
   * The stock the document moves once posted (its lines of product items; open-items/stock.ts), or
   * null. `hold: true` (goods leaving: an invoice) reserves them in inventory before the kind's own
   * steps, so a post whose delivery would take an item below zero is refused before anything is posted.
   */
  stock?(ctx: OperationContext, doc: D): Promise<(StockDocument & { hold: boolean }) | null>;
}

/** A document while its post runs: the booking its entry step computed (recomputed by a rerun). */
type Posted<D> = D & { booking?: Booking<D> };

/** A kind of post: a durable operation whose record is the document (its `posting` field the claim), and how it posts. */
export type PostOperation<D> = OperationKind<Posted<D>> & { posting: Posting<D> };

/** The document's claim (present while it is being posted). */
function claimOf(doc: OpenItemDoc): PostClaim | null {
  return doc.posting ?? null;
}

/**
 * Declares the post of one ledger's documents as a durable operation (shared/src/operations.ts):
 * 1. the claim — a document already posted is left as it is (every step after changes nothing);
 *    a draft nobody claimed (the call died before taking it) ends the operation, nothing done;
 * 2. the kind's own steps on the claimed draft (`prepare`);
 * 3. the journal entry (its id derived from the document: a rerun cannot add a second);
 * 4. the due-date index, before the document is open (an extra id of a draft is filtered out by the lane);
 * 5. one conditional update draft → posted carrying the rollup intent, then the rollups.
 * A post killed anywhere is finished by the sweep, or by a keyed retry answered from the document.
 */
export function definePostOperation<D extends OpenItemDoc & { issue_date: string }>(kind: string, ledger: OpenItemLedger<D>, posting: Posting<D>): PostOperation<D> {
  // A document posted already has no claim left: what runs after its post needs neither the time nor the regime.
  const contextOf = (ctx: OperationContext, doc: D): PostContext => ({ ...ctx, claim: claimOf(doc) ?? { at: ctx.now, regime: null } });
  /**
   * Runs a step before the entry; its refusal (a used-up numbering range, a closed period, a credit
   * note its invoice cannot take) ends the post undone — the claim goes, the draft is a draft again,
   * the marker is dropped — so the sweep never posts later what its caller was refused. Anything
   * else (a lost connection) leaves the operation for the sweep.
   */
  async function refusedUndone<R>(ctx: OperationContext, doc: D, step: () => Promise<R>): Promise<R> {
    try {
      return await step();
    } catch (err) {
      if (isCuadraError(err) && err.code !== 'unavailable' && err.code !== 'internal') await undo(ctx, doc);
      throw err;
    }
  }
  /** Ends the post undone: the stock it held given back, the claim gone, the marker dropped. */
  async function undo(ctx: OperationContext, doc: D): Promise<void> {
    if (claimOf(doc)?.stock_held) await releaseStock(ctx, doc._id);
    await ledger.model(ctx.db).updateOne({ _id: doc._id, status: 'draft' } as never, { $set: { posting: null } } as never);
    await dropOperation(ctx, operation, doc._id);
  }
  const operation: OperationKind<Posted<D>> = defineOperation<Posted<D>>({
    kind,
    load: (ctx, id) => ledger.model(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean() as Promise<Posted<D> | null>,
    steps: [
      async function claim(ctx, doc) {
        if (doc.status !== 'draft' || claimOf(doc)) return doc;
        await dropOperation(ctx, operation, doc._id);
        throw new CuadraError('conflict', `${doc._id} was never taken for posting; nothing to finish.`);
      },
      async function holdStockStep(ctx, doc) {
        // Before the number: a refused hold leaves no gap in the numbering range.
        const claim = claimOf(doc);
        if (doc.status !== 'draft' || !claim || claim.stock_held || !posting.stock) return doc;
        const stock = await posting.stock(ctx, doc);
        if (!stock?.hold || !stock.lines.length) return doc;
        try {
          await holdStock(ctx, stock);
        } catch (err) {
          // Refused, or inventory not answering: either way nothing is posted (the caller is told now, not the sweep later).
          await undo(ctx, { ...doc, posting: { ...claim, stock_held: true } });
          throw err;
        }
        const held = { ...claim, stock_held: true };
        await ledger.model(ctx.db).updateOne({ _id: doc._id, status: 'draft' } as never, { $set: { posting: held } } as never);
        return { ...doc, posting: held };
      },
      async function prepare(ctx, doc) {
        return doc.status === 'draft' && posting.prepare ? refusedUndone(ctx, doc, () => posting.prepare!(contextOf(ctx, doc), doc)) : doc;
      },
      async function entry(ctx, doc) {
        if (doc.status !== 'draft') return doc;
        // Closed since the claim (a close waits for posts in flight, so only a repair late past it): undone.
        await refusedUndone(ctx, doc, () => assertPeriodOpen(ctx.db, ctx.workspace, doc.issue_date));
        const booking = await refusedUndone(ctx, doc, () => posting.booking(contextOf(ctx, doc), doc));
        await postEntry(ctx, booking.source, booking.lines, booking.heading);
        return { ...doc, booking };
      },
      async function dueIndex(ctx, doc) {
        if (doc.status === 'draft' && ledger.isOpen({ ...doc, status: 'posted' })) await addToDue(ctx, ledger, doc);
        return doc;
      },
      async function complete(ctx, doc) {
        if (doc.status !== 'draft' || !doc.booking) return doc;
        const model = ledger.model(ctx.db) as unknown as Model<OpenItemDoc>;
        const { booking } = doc;
        const intent = rollupIntent(booking.deltas, ctx.now);
        const counted = intentUpdate(intent);
        // The number the posting gives is searched too (its trigrams kept before it is written).
        await addSearchGrams(ctx, ledger, doc as D, { ...doc, ...booking.set } as D);
        await markIntent(ctx.db, ctx.workspace, model as never, doc._id, intent);
        const posted = (await model.findOneAndUpdate(
          { _id: doc._id, status: 'draft', posting: { $ne: null } },
          {
            $set: { ...booking.set, status: 'posted', journal_entry_id: booking.heading.id, posting: null, posted_at: claimOf(doc)!.at, updated_at: ctx.now },
            $inc: { rev: 1, ...counted.$inc }, ...(counted.$push ? { $push: counted.$push } : {}),
          },
          { returnDocument: 'after' },
        ).lean()) as D | null;
        if (!posted) {
          // Another runner (a takeover) completed it first: its intent counts, this one goes.
          if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
          const now = (await model.findById(doc._id).lean()) as D | null;
          if (now?.status === 'posted') return now;
          throw new CuadraError('conflict', `${doc._id} changed while being posted.`);
        }
        await applyRollupIntent(ctx.db, model as never, doc._id, ctx.workspace, intent);
        return posted as Posted<D>;
      },
      async function afterPost(ctx, doc) {
        if (doc.status === 'posted' && posting.after) await posting.after(contextOf(ctx, doc), doc);
        return doc;
      },
      async function stockFeed(ctx, doc) {
        // Posted: inventory may now move its goods (open-items/stock.ts); once, whoever runs this step.
        const stock = doc.status === 'posted' && posting.stock ? await posting.stock(ctx, doc) : null;
        if (stock) await publishStockDocument(ctx, stock);
        return doc;
      },
    ],
  });
  return Object.assign(operation, { posting });
}

/**
 * Posts a draft open item, exactly once, on the durable-operation runner:
 * 1. refused in a closed period before anything is taken (postEntry holds the rule: books/post.ts);
 * 2. the operation's marker, then the claim — a conditional update of the draft (unclaimed) storing
 *    the time and the workspace's tax regime ({@link PostClaim}); a draft another live post holds
 *    is refused, one a dead process left past the repair wait is taken over and finished here;
 * 3. the steps of {@link definePostOperation}.
 * It needs the store and the time only, so a module's sweep can finish a post its own intent asked for.
 */
export async function postOpenItem<D extends OpenItemDoc & { issue_date: string }>(
  ctx: OperationContext,
  ledger: OpenItemLedger<D>,
  operation: PostOperation<D>,
  id: string,
  regime: string | null,
): Promise<D> {
  const { posting } = operation;
  const model = ledger.model(ctx.db);
  const asked = { _id: id, workspace: ctx.workspace, status: 'draft', ...posting.claimFilter };
  const draft = (await model.findOne(asked).lean()) as D | null;
  if (!draft) throw posting.refusal((await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null, id);
  await assertPeriodOpen(ctx.db, ctx.workspace, draft.issue_date);
  await beginOperation(ctx, operation, id);
  let claimed = (await model.findOneAndUpdate(
    { ...asked, posting: null },
    { $set: { posting: { at: ctx.now, regime } satisfies PostClaim } },
    { returnDocument: 'after' },
  ).lean()) as D | null;
  if (!claimed) {
    const now = (await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null;
    if (now?.status === 'draft' && claimOf(now) && (await takeOverOperation(ctx, operation, id))) claimed = now;
    else throw posting.refusal(now, id);
  }
  const { booking: _, ...posted } = await runOperation<Posted<D>>(ctx, operation, claimed, id);
  return posted as unknown as D;
}

/**
 * What {@link postOpenItem} would do, read only — a dry run, and what a held post shows the person
 * deciding: the same refusal (`posting.refusal` when the document is no draft matching
 * `claimFilter`), the same `booking` (with a claim of this moment, as a post now would take) and its
 * entry checked as the post checks it (a declared source, balanced lines, an open period: books'
 * previewEntry), nothing written. Only a kind without a `prepare` step (its steps before the entry
 * write: the invoices' number, a credit note's application) previews this way (bills); the others
 * preview themselves.
 */
export async function previewOpenItemPost<D extends OpenItemDoc & { issue_date: string }>(
  ctx: ToolContext,
  ledger: OpenItemLedger<D>,
  operation: PostOperation<D>,
  id: string,
  regime: string | null,
): Promise<PostingPreview> {
  const { posting } = operation;
  const model = ledger.model(ctx.db);
  const draft = (await model.findOne({ _id: id, workspace: ctx.workspace, status: 'draft', ...posting.claimFilter }).lean()) as D | null;
  if (!draft) throw posting.refusal((await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null, id);
  const booking = await posting.booking({ ...ctx, claim: { at: ctx.now, regime } }, draft);
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
