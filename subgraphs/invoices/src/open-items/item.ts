import { addGrams, createPositioned, CuadraError, storedUnderId, trigramsOf, type ToolContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { EVERY_WORKSPACE, type DueIndex } from '../books/due-index.ts';
import { pendingChanges } from '../books/rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, rollupIntent, type RollupDelta, type RollupIntent } from '../books/rollup-intents.ts';

/**
 * Which side of the books an open item sits on: what customers owe the workspace (invoices, debit
 * notes and their credit notes) or what the workspace owes vendors (bills and theirs) — ERPNext's
 * party type on one Payment Entry, here on one open item.
 */
export type Direction = 'receivable' | 'payable';

/** A reduction (or, negative, a reversal) of an open item's balance, dated for aging at any `as_of`. */
export interface ItemSettlement { ref: string; kind?: 'payment' | 'credit_note'; date: string; amount: number }

/** What the engine reads and writes of an open item; each direction's document has more. */
export interface OpenItemDoc {
  _id: string;
  workspace: string;
  kind?: string;
  status: string;
  due_date: string;
  balance: number;
  paid: number;
  settlements: ItemSettlement[];
  closed_on: string | null;
  /** The claim of the post running on it (post.ts), null otherwise. */
  posting?: PostClaim | null;
  rev: number;
}

/**
 * The bookkeeping fields every open item's document keeps, whatever its direction: the post's
 * claim, the revision every change is conditional on, the rollup intents in flight, and when it
 * was posted, created and last changed. Invoices and bills extend it.
 */
export interface OpenItemRecord {
  /** The claim of the post running on it (post.ts), null otherwise. */
  posting: PostClaim | null;
  /** Bumped by every change; every update is conditional on it (optimistic concurrency). */
  rev: number;
  pending_rollups: RollupIntent[];
  pending_count: number;
  notes: string | null;
  posted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The mongoose fields of {@link OpenItemRecord}, spread into each open item's schema. */
export const OPEN_ITEM_RECORD_FIELDS = {
  posting: { type: Schema.Types.Mixed, default: null },
  rev: { type: Number, required: true },
  pending_rollups: { type: Schema.Types.Mixed, default: [] },
  pending_count: { type: Number, required: true },
  notes: { type: String, default: null },
  posted_at: { type: Date, default: null },
  created_at: { type: Date, required: true },
  updated_at: { type: Date, required: true },
} as const;

/**
 * What a post stores on its draft when it takes it (the post's operation record is the document):
 * when it was asked and the workspace's tax regime then — what a repair by the sweep, which has no
 * caller, posts with.
 */
export interface PostClaim {
  at: Date;
  /** The tax regime of the workspace when the post was asked (`dian`, …), as the caller's principal said. */
  regime: string | null;
  /** An invoice's product lines are held in inventory for it (open-items/stock.ts): a rerun does not hold them again. */
  stock_held?: boolean;
}

/** What a planned change writes: fields to set, arrays to push to, rollup deltas. */
export interface OpenItemChange<D> {
  set?: Partial<D>;
  push?: Record<string, unknown>;
  deltas?: RollupDelta[];
}

/** The context a change runs in. */
export type ItemContext = Pick<ToolContext, 'db' | 'workspace' | 'now'>;

/**
 * One direction's open items, declared by the module that owns their documents (invoices,
 * bills): the engine imports no module, the module hands it its collection, due-date index and
 * rules.
 */
export interface OpenItemLedger<D extends OpenItemDoc> {
  direction: Direction;
  /** The document as messages name it, lower case: `invoice`, `bill`. */
  noun: string;
  model(db: Connection): Model<D>;
  /** The due-date index of the direction's lane (books/due-index.ts). */
  due: DueIndex;
  /**
   * A second due-date index, over every workspace ({@link EVERY_WORKSPACE}), of the open items
   * `picks` chooses — kept by the same rule as `due` (added before open, pulled after): what a sweep
   * reads by due day instead of scanning every workspace's documents (the plans' dunning).
   */
  dueAcross?: { index: DueIndex; picks(doc: D): boolean };
  /** Open as the direction's lane means it (posted or partly paid, never a credit note). */
  isOpen(doc: Pick<D, 'status' | 'kind'>): boolean;
  /** The rollup change of a document moving from one status to another. */
  statusDelta(doc: D, from: D['status'] | null, to: D['status'] | null): RollupDelta[];
  /** The `kind` a payment's settlement carries in this direction's documents (receivables mark it; payables never did). */
  paymentKind?: 'payment';
  /** Looks at a planned change before it is written and may refuse or amend it (a bill held by a payment run). */
  guard?(ctx: ItemContext, doc: D, change: OpenItemChange<D>): Promise<OpenItemChange<D>>;
  /** A write's error in the domain's words (a duplicate vendor number); anything else passes. */
  writeError?(err: unknown): unknown;
  /** The texts a search of the documents looks in (`search_lc`): their trigrams are kept (shared search-grams.ts). */
  searchable?(doc: D): readonly (string | null | undefined)[];
}

/**
 * Keeps the search trigrams a planned change gives a document that it had not (search-grams.ts),
 * before the change is written: a crash, or a write that loses its race, leaves at most an extra
 * candidate, which the search's own test drops. Grams the document loses are left (extra candidates
 * too; parties take theirs off, here a changed search text is a draft's edit or its posting).
 */
export async function addSearchGrams<D extends OpenItemDoc>(ctx: Pick<ItemContext, 'db' | 'workspace'>, ledger: OpenItemLedger<D>, before: D, planned: D): Promise<void> {
  if (!ledger.searchable) return;
  const pos = (before as { pos?: unknown }).pos;
  if (typeof pos !== 'number') return;
  const had = new Set(trigramsOf(ledger.searchable(before)));
  const fresh = trigramsOf(ledger.searchable(planned)).filter((g) => !had.has(g));
  if (fresh.length) await addGrams(ctx.db, ledger.model(ctx.db).collection.collectionName, ctx.workspace, pos, fresh);
}

/** Adds a document to its day in the ledger's due-date indexes (before it becomes open, or moves day). */
export async function addToDue<D extends OpenItemDoc>(ctx: Pick<ItemContext, 'db' | 'workspace'>, ledger: OpenItemLedger<D>, doc: D): Promise<void> {
  await ledger.due.add(ctx.db, ctx.workspace, doc.due_date, doc._id);
  if (ledger.dueAcross?.picks(doc)) await ledger.dueAcross.index.add(ctx.db, EVERY_WORKSPACE, doc.due_date, doc._id);
}

/** Pulls a document from its day in the ledger's due-date indexes (after it stopped being open there). */
async function pullFromDue<D extends OpenItemDoc>(ctx: Pick<ItemContext, 'db' | 'workspace'>, ledger: OpenItemLedger<D>, doc: D): Promise<void> {
  await ledger.due.pull(ctx.db, ctx.workspace, doc.due_date, doc._id);
  if (ledger.dueAcross?.picks(doc)) await ledger.dueAcross.index.pull(ctx.db, EVERY_WORKSPACE, doc.due_date, doc._id);
}

/** The statuses a balance decides. */
export type SettledStatus = 'posted' | 'partially_paid' | 'paid';

/**
 * Status of an open item from its balance and what reduced it — the one rule for both directions:
 * a cancelled document stays cancelled; nothing left open is paid; something paid is partly paid.
 */
export function settledStatus<S extends string>(item: { balance: number; paid: number; status: S }): Extract<S, 'cancelled'> | SettledStatus {
  if (item.status === 'cancelled') return item.status as Extract<S, 'cancelled'>;
  if (item.balance <= 0) return 'paid';
  return item.paid > 0 ? 'partially_paid' : 'posted';
}

function capitalised(noun: string): string {
  return noun[0].toUpperCase() + noun.slice(1);
}

/** The refusal of a document that is not in the workspace. */
export function missingItem(ledger: Pick<OpenItemLedger<never>, 'noun'>, id: string): CuadraError {
  return new CuadraError('not_found', `No ${ledger.noun} ${id} exists in this workspace.`);
}

/**
 * Changes one open item by a conditional update on its `rev` (optimistic concurrency): reads it,
 * lets `plan` decide (or refuse), lets the ledger's guard look, writes only if nobody changed it
 * meanwhile, else tries again. The rollup intent rides in the same write and is applied right
 * after. `plan` returning null means "nothing to do" (an idempotent repeat).
 */
export async function changeOpenItem<D extends OpenItemDoc>(
  ctx: ItemContext,
  ledger: OpenItemLedger<D>,
  id: string,
  plan: (doc: D) => OpenItemChange<D> | null,
  extraFilter: Record<string, unknown> = {},
): Promise<D> {
  const model = ledger.model(ctx.db) as unknown as Model<OpenItemDoc>;
  for (let attempt = 0; attempt < 8; attempt++) {
    const doc = (await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null;
    if (!doc) throw missingItem(ledger, id);
    let change = plan(doc);
    if (!change) return doc;
    if (ledger.guard) change = await ledger.guard(ctx, doc, change);
    const intent = rollupIntent(change.deltas ?? [], ctx.now);
    const counted = intentUpdate(intent);
    const update: Record<string, unknown> = { $set: { ...change.set, updated_at: ctx.now }, $inc: { rev: 1, ...counted.$inc } };
    const push = { ...change.push, ...counted.$push };
    if (Object.keys(push).length) update.$push = push;
    // The due-date index (books/due-index.ts): added to before the document becomes open (or moves
    // day), pulled from after it no longer is — a crash in between leaves an extra id the lane filters out.
    const planned = { ...doc, ...change.set };
    await addSearchGrams(ctx, ledger, doc, planned);
    const wasOpen = ledger.isOpen(doc);
    if (ledger.isOpen(planned) && (!wasOpen || planned.due_date !== doc.due_date)) await addToDue(ctx, ledger, planned);
    await markIntent(ctx.db, ctx.workspace, model, id, intent);
    try {
      const after = (await model.findOneAndUpdate({ _id: id, workspace: ctx.workspace, rev: doc.rev, ...extraFilter }, update, { returnDocument: 'after' }).lean()) as D | null;
      if (after) {
        if (wasOpen && (!ledger.isOpen(after) || after.due_date !== doc.due_date)) await pullFromDue(ctx, ledger, doc);
        await applyRollupIntent(ctx.db, model, id, ctx.workspace, intent);
        return after;
      }
    } catch (err) {
      if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
      throw ledger.writeError ? ledger.writeError(err) : err;
    }
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
  }
  throw new CuadraError('conflict', `${capitalised(ledger.noun)} ${id} is being changed by other calls right now; try again.`);
}

/** {@link changeOpenItem} bound to one ledger: how a module names the change of its documents (`changeInvoice`, `changeBill`). */
export type ChangeOf<D extends OpenItemDoc> = (ctx: ItemContext, id: string, plan: (doc: D) => OpenItemChange<D> | null, extraFilter?: Record<string, unknown>) => Promise<D>;

/** The change of one ledger's documents. */
export function changerOf<D extends OpenItemDoc>(ledger: OpenItemLedger<D>): ChangeOf<D> {
  return (ctx, id, plan, extraFilter) => changeOpenItem(ctx, ledger, id, plan, extraFilter);
}

/**
 * Inserts a new draft and counts it in the rollups (its draft status on its issue day).
 * `beforeInsert` runs once the intent is marked and before the document exists (the invoices'
 * recent index).
 */
export async function insertOpenItem<D extends OpenItemDoc & { pending_rollups: unknown[]; pending_count: number }>(
  ctx: ItemContext,
  ledger: OpenItemLedger<D>,
  doc: D,
  beforeInsert?: () => Promise<void>,
): Promise<D> {
  const model = ledger.model(ctx.db);
  const intent = rollupIntent(ledger.statusDelta(doc, null, 'draft'), ctx.now);
  const stored: D = intent ? { ...doc, pending_rollups: [intent], pending_count: 1 } : doc;
  await markIntent(ctx.db, ctx.workspace, model, doc._id, intent);
  await beforeInsert?.();
  try {
    await createPositioned(model, stored, ledger.searchable ? { searchable: (d) => ledger.searchable!(d) } : {});
  } catch (err) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    // Its id taken: in a call that can run again the id is the same in every attempt (repeatableId,
    // runs.ts), so the document under it is this call's, written by an attempt whose insert the store
    // applied late. It is answered (its own counting finished here), not inserted a second time.
    const known = await storedUnderId(err, model, doc._id, ctx.workspace);
    if (known) return finishedCounting(ctx, model, known);
    throw ledger.writeError ? ledger.writeError(err) : err;
  }
  await applyRollupIntent(ctx.db, model, doc._id, ctx.workspace, intent);
  return { ...stored, pending_rollups: [], pending_count: 0 };
}

/** A stored document with the rollup intents its writer left pending applied (applying one twice changes nothing: its marks). */
async function finishedCounting<D extends OpenItemDoc & { pending_rollups: unknown[]; pending_count: number }>(ctx: ItemContext, model: Model<D>, known: D): Promise<D> {
  for (const intent of known.pending_rollups as RollupIntent[]) await applyRollupIntent(ctx.db, model, known._id, ctx.workspace, intent);
  return { ...known, pending_rollups: [], pending_count: 0 };
}

/**
 * The change that applies `amount` of a payment `ref` to an open item on `date`: the balance
 * lowered, `paid` raised, the status the balance decides, closed when nothing is left.
 */
export function paymentApplied<D extends OpenItemDoc>(ledger: OpenItemLedger<D>, item: D, ref: string, date: string, amount: number): OpenItemChange<D> {
  const balance = item.balance - amount;
  const paid = item.paid + amount;
  const status = settledStatus({ balance, paid, status: item.status });
  const settlement: ItemSettlement = { ref, ...(ledger.paymentKind ? { kind: ledger.paymentKind } : {}), date, amount };
  return {
    set: { balance, paid, status, closed_on: balance <= 0 ? date : null } as Partial<D>,
    push: { settlements: settlement },
    deltas: ledger.statusDelta(item, item.status, status),
  };
}

/**
 * The change that gives back `amount` of a reversed payment: owed again from `date` (a negative
 * settlement `ref`; nothing is deleted, so aging at any date stays right), the status the new
 * balance decides — a paid document becomes at most partly paid, a cancelled one stays cancelled.
 */
export function paymentReopened<D extends OpenItemDoc>(ledger: OpenItemLedger<D>, item: D, ref: string, date: string, amount: number): OpenItemChange<D> {
  const balance = item.balance + amount;
  const paid = item.paid - amount;
  const status = settledStatus({ balance, paid, status: item.status === 'paid' ? 'partially_paid' : item.status });
  const settlement: ItemSettlement = { ref, ...(ledger.paymentKind ? { kind: ledger.paymentKind } : {}), date, amount: -amount };
  return { set: { balance, paid, status, closed_on: null } as Partial<D>, push: { settlements: settlement }, deltas: ledger.statusDelta(item, item.status, status) };
}
