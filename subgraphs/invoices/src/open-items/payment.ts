import { beginOperation, CuadraError, defineOperation, finishStaleOperations, OPERATIONS_COLLECTION, RUN_FIELD, runOperation, withLock, type LegacyMarkers, type OperationContext, type OperationDoc, type OperationKind } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { postEntry, reverseEntry, updateCounted, type EntryHeading, type EntrySource, type JournalLine, type RecordChange } from '../books/index.ts';
import { rollupIntent, type RollupDelta } from '../books/rollup-intents.ts';
import { changeOpenItem, missingItem, paymentApplied, paymentReopened, type ItemContext, type OpenItemDoc, type OpenItemLedger } from './item.ts';

/** What the engine reads of one part of a payment set against one open item. */
export interface AllocationRecord {
  /** What was asked for (null: as much as the item's balance allows). */
  requested: number | null;
  /** What was applied; null until the payment is completed. */
  applied: number | null;
}

/**
 * What the engine reads and writes of a payment, in either direction: written `pending` (the
 * intent), applied to its open items, journalled, completed; later perhaps `reversed`.
 */
export interface PaymentRecord<A extends AllocationRecord = AllocationRecord> {
  _id: string;
  workspace: string;
  /** `reversed`: undone by a reversing entry (bank.unreconcile); the items it settled are owed again. */
  status: 'pending' | 'completed' | 'reversed';
  currency: string;
  amount: number;
  date: string;
  reference: string | null;
  allocations: A[];
  journal_entry_id: string | null;
  /** Rollup intents riding on the payment's counted writes (books/rollup-intents.ts). */
  pending_rollups: unknown[];
  pending_count: number;
  created_at: Date;
  updated_at: Date;
}

/** The mongoose fields of a {@link PaymentRecord}'s bookkeeping (its entry, rollup intents, times), spread into each direction's payment schema. */
export const PAYMENT_RECORD_FIELDS = {
  journal_entry_id: { type: String, default: null },
  pending_rollups: { type: Schema.Types.Mixed, default: [] },
  pending_count: { type: Number, required: true },
  created_at: { type: Date, required: true },
  updated_at: { type: Date, required: true },
} as const;

/** A due-date change of the direction's lane: an item's open amount moved on its due date. */
export interface DueChange { date: string; amount: number }

/** A payment while its operation runs: the open amounts it moved, by due date (recomputed by a rerun). */
export type InFlight<P> = P & { dueChanges?: DueChange[] };

/**
 * One direction's payments, declared by the module that owns them (customer payments, bill
 * payments) — ERPNext's Payment Entry with a party type: one engine settles, completes and
 * reverses both.
 */
export interface PaymentLedger<P extends PaymentRecord, D extends OpenItemDoc> {
  /** The open items it settles. */
  items: OpenItemLedger<D>;
  /** The payment as messages name it, lower case: `payment`, `bill payment`. */
  noun: string;
  model(db: Connection): Model<P>;
  /** The open item an allocation is set against. */
  itemOf(allocation: P['allocations'][number]): string;
  /** The rollup currency (namespace) the direction counts in. */
  rollupCurrency(currency: string): string;
  /** The journal source kind its entries are posted under. */
  sourceKind: string;
  /** The lines of its entry. */
  entryLines(payment: P): JournalLine[];
  /** The memo of its entry, and of the entry reversing it. */
  memo(payment: P): string;
  reversalMemo(payment: P): string;
  /** The counters a completed payment moves on its date (beside the due-date changes), and the fields its completion sets. */
  completion(payment: P): { inc: Record<string, number>; set?: Partial<P> };
  /** The counters its reversal moves on the reversal's date. */
  reversal(payment: P): Record<string, number>;
  /** Why a completed payment cannot be reversed here (customer credit it left may be spent), or null. */
  refuseReversal?(payment: P): CuadraError | null;
}

/** The journal entry of a payment: its id chosen from the payment's, so posting it twice is one entry. */
export function paymentEntryId(paymentId: string): string {
  return `je_${paymentId}`;
}

/** The journal entry a payment posts (the `journal` step's, and its dry run's): source, lines, heading. */
export function paymentEntry<P extends PaymentRecord, D extends OpenItemDoc>(ledger: PaymentLedger<P, D>, payment: P): { source: EntrySource; lines: JournalLine[]; heading: EntryHeading } {
  return {
    source: { kind: ledger.sourceKind, id: payment._id },
    lines: ledger.entryLines(payment),
    heading: { id: paymentEntryId(payment._id), date: payment.date, currency: payment.currency, memo: ledger.memo(payment) },
  };
}

/** The rollup intent of a payment's counters and its due-date changes, on `day`. */
function paymentIntent(currency: string, day: string, inc: Record<string, number>, dueChanges: readonly DueChange[], now: Date) {
  return rollupIntent([{ day, currency, inc }, ...dueChanges.map((due): RollupDelta => ({ day, currency, inc: {}, due }))], now);
}

/** One allocation as settled: the item after the change, and what of the payment it holds. */
export interface SettledAllocation<A, D> { allocation: A; item: D; applied: number }

/**
 * Applies a payment to its open items in order, each once (an item that lists the payment in its
 * settlements is left alone: a rerun reads what it applied). `share` says how much of what is
 * `left` goes to an item — null or ≤ 0 for none — or refuses; `onRefusal` hears a refusal and how
 * many items were settled before it.
 */
export async function settleAllocations<P extends PaymentRecord, D extends OpenItemDoc>(
  ctx: ItemContext,
  ledger: PaymentLedger<P, D>,
  payment: P,
  share: (item: D, allocation: P['allocations'][number], left: number) => number | null,
  onRefusal?: (err: unknown, settledBefore: number) => Promise<void>,
): Promise<{ settled: SettledAllocation<P['allocations'][number], D>[]; left: number; dueChanges: DueChange[] }> {
  let left = payment.amount;
  const settled: SettledAllocation<P['allocations'][number], D>[] = [];
  const dueChanges: DueChange[] = [];
  for (const a of payment.allocations) {
    const item = await changeOpenItem(ctx, ledger.items, ledger.itemOf(a), (doc) => {
      if (doc.settlements.some((s) => s.ref === payment._id)) return null;
      const amount = share(doc, a, left);
      if (amount === null || amount <= 0) return null;
      return paymentApplied(ledger.items, doc, payment._id, payment.date, amount);
    }).catch(async (err: unknown) => {
      await onRefusal?.(err, settled.length);
      throw err;
    });
    const applied = item.settlements.find((s) => s.ref === payment._id)?.amount ?? 0;
    left -= applied;
    settled.push({ allocation: a, item, applied });
    if (applied > 0) dueChanges.push({ date: item.due_date, amount: -applied });
  }
  return { settled, left, dueChanges };
}

/**
 * What {@link settleAllocations} would apply, read only (a payment's dry run): each item read as it
 * stands, `share` — the direction's rule, the one the operation runs — and the engine's
 * {@link paymentApplied} deciding its balance and status; an item met twice sees the first
 * allocation's change. A missing item is refused as the real settlement refuses it.
 */
export async function previewAllocations<P extends PaymentRecord, D extends OpenItemDoc>(
  ctx: ItemContext,
  ledger: PaymentLedger<P, D>,
  payment: P,
  share: (item: D, allocation: P['allocations'][number], left: number) => number | null,
): Promise<{ settled: SettledAllocation<P['allocations'][number], D>[]; left: number; changes: RecordChange[] }> {
  const model = ledger.items.model(ctx.db);
  const seen = new Map<string, D>();
  const changes: RecordChange[] = [];
  const settled: SettledAllocation<P['allocations'][number], D>[] = [];
  let left = payment.amount;
  for (const a of payment.allocations) {
    const id = ledger.itemOf(a);
    const doc = seen.get(id) ?? ((await model.findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null);
    if (!doc) throw missingItem(ledger.items, id);
    const amount = doc.settlements.some((s) => s.ref === payment._id) ? null : share(doc, a, left);
    if (amount === null || amount <= 0) {
      settled.push({ allocation: a, item: doc, applied: 0 });
      continue;
    }
    const item = { ...doc, ...paymentApplied(ledger.items, doc, payment._id, payment.date, amount).set } as D;
    seen.set(id, item);
    left -= amount;
    settled.push({ allocation: a, item, applied: amount });
    changes.push({ source: model.collection.collectionName, id, op: 'update', before: { balance: doc.balance, paid: doc.paid, status: doc.status }, after: { balance: item.balance, paid: item.paid, status: item.status } });
  }
  return { settled, left, changes };
}

/**
 * Declares a direction's payment as a durable operation (shared/src/operations.ts): `settle`
 * (the direction's rule for how much each item takes), then the journal entry (its id the
 * payment's), then completion — one conditional update pending → completed carrying its rollups —
 * then any `after` steps. Every step may run again without effect the second time.
 */
export function definePaymentOperation<P extends PaymentRecord, D extends OpenItemDoc>(
  ledger: PaymentLedger<P, D>,
  kind: { kind: string; legacyMarkers?: readonly LegacyMarkers[]; lock: (workspace: string, payment: P) => string },
  settle: (ctx: OperationContext, payment: InFlight<P>) => Promise<InFlight<P>>,
  after: readonly ((ctx: OperationContext, payment: InFlight<P>) => Promise<InFlight<P>>)[] = [],
): OperationKind<InFlight<P>> {
  const { lock, ...declared } = kind;
  return defineOperation<InFlight<P>>({
    ...declared,
    // A payment its dead attempt's insert put in the store after recovery settled the call as having
    // written nothing (the key handed back, the ledger `interrupted`): removed, so the books tell the
    // same story — under the payer's lock (its register/pay calls: a retry cannot interleave), only
    // while the marker is still `wrote_nothing` (a retry takes it over) and the payment is as that
    // attempt wrote it: `pending`, stamped by its run alone. Nothing else of it exists: its steps
    // run only after its insert is answered, which a dead attempt never got.
    withdraw: (ctx, found, marker) => withLock(ctx.db, lock(ctx.workspace, found), async () => {
      const operations = ctx.db.collection<OperationDoc>(OPERATIONS_COLLECTION);
      if ((await operations.findOne({ _id: marker._id }))?.status !== 'wrote_nothing') return 'taken';
      const model = ledger.model(ctx.db).collection;
      const asWritten = { _id: found._id, workspace: ctx.workspace, status: 'pending', [RUN_FIELD]: [marker.run] };
      if ((await model.deleteOne(asWritten as never)).deletedCount !== 1) {
        if (await model.findOne({ _id: found._id } as never)) return 'kept';
      }
      await operations.deleteOne({ _id: marker._id, status: 'wrote_nothing' });
      return 'withdrawn';
    }),
    load: (ctx, id) => ledger.model(ctx.db).findById(id).lean() as Promise<InFlight<P> | null>,
    steps: [
      settle,
      async function journal(ctx, payment) {
        const entry = paymentEntry(ledger, payment);
        await postEntry(ctx, entry.source, entry.lines, entry.heading);
        return payment;
      },
      async function complete(ctx, payment) {
        const { inc, set } = ledger.completion(payment);
        const intent = paymentIntent(ledger.rollupCurrency(payment.currency), payment.date, inc, payment.dueChanges ?? [], ctx.now);
        const model = ledger.model(ctx.db) as unknown as Model<PaymentRecord>;
        const done = await updateCounted(ctx, model, payment._id, { _id: payment._id, status: 'pending' }, {
          $set: { status: 'completed', allocations: payment.allocations, ...set, journal_entry_id: paymentEntryId(payment._id), updated_at: ctx.now },
        }, intent);
        const final = done ?? (await model.findById(payment._id).lean());
        if (!final) throw new CuadraError('internal', `The ${ledger.noun} vanished while being completed.`);
        return final as InFlight<P>;
      },
      ...after,
    ],
  });
}

/** Applies a pending payment and completes it (every step idempotent: see {@link definePaymentOperation}). */
export function completePayment<P extends PaymentRecord>(ctx: ItemContext, operation: OperationKind<InFlight<P>>, payment: P): Promise<P> {
  return runOperation<InFlight<P>>(ctx, operation, payment, payment._id);
}

/**
 * A payment already recorded under a call's id, as it stands: a pending one (an earlier attempt's —
 * perhaps a dead one's whose marker recovery dropped or watches before its insert landed) is marked
 * in flight again, so the sweep finishes it if this process dies too, and completed; any other is
 * answered as it is.
 */
export async function completeKnownPayment<P extends PaymentRecord>(ctx: ItemContext, operation: OperationKind<InFlight<P>>, known: P): Promise<P> {
  if (known.status !== 'pending') return known;
  await beginOperation(ctx, operation, known._id);
  return completePayment(ctx, operation, known);
}

/** Finishes the payments of a workspace a dead process left pending (past the one repair wait). */
export function completeStuckPayments(ctx: ItemContext, operation: OperationKind<any>): Promise<number> {
  return finishStaleOperations(ctx.db, [operation], ctx.now, ctx.workspace);
}

/**
 * Reverses a completed payment (bank.unreconcile), in either direction: each item it settled owes
 * the amount again (a negative settlement dated `date`, so aging at any date stays right; nothing
 * is deleted), a reversing entry swaps its journal lines (books' reverseEntry), and the payment
 * becomes `reversed` with its rollups moved back — one conditional update completed → reversed.
 * Every step may run again without effect.
 */
export async function reversePayment<P extends PaymentRecord, D extends OpenItemDoc>(ctx: ItemContext, ledger: PaymentLedger<P, D>, paymentId: string, date: string): Promise<P> {
  const model = ledger.model(ctx.db) as unknown as Model<PaymentRecord>;
  const payment = (await model.findOne({ _id: paymentId, workspace: ctx.workspace }).lean()) as P | null;
  const Noun = ledger.noun[0].toUpperCase() + ledger.noun.slice(1);
  if (!payment) throw new CuadraError('not_found', `No ${ledger.noun} ${paymentId} exists in this workspace.`);
  if (payment.status === 'reversed') return payment;
  if (payment.status !== 'completed') throw new CuadraError('conflict', `${Noun} ${paymentId} is ${payment.status}.`);
  const refused = ledger.refuseReversal?.(payment);
  if (refused) throw refused;
  const ref = `${payment._id}:rev`;
  const byDue: DueChange[] = [];
  for (const a of payment.allocations) {
    const amount = a.applied ?? 0;
    if (amount <= 0) continue;
    const item = await changeOpenItem(ctx, ledger.items, ledger.itemOf(a), (doc) =>
      doc.settlements.some((s) => s.ref === ref) ? null : paymentReopened(ledger.items, doc, ref, date, amount));
    byDue.push({ date: item.due_date, amount });
  }
  await reverseEntry(ctx, payment.journal_entry_id ?? paymentEntryId(payment._id), date, { id: `je_rev_${payment._id}`, memo: ledger.reversalMemo(payment) });
  const intent = paymentIntent(ledger.rollupCurrency(payment.currency), date, ledger.reversal(payment), byDue, ctx.now);
  const done = await updateCounted(ctx, model, payment._id, { _id: payment._id, workspace: ctx.workspace, status: 'completed' }, { $set: { status: 'reversed', updated_at: ctx.now } }, intent);
  return (done ?? (await model.findById(payment._id).lean())!) as P;
}
