import { addPositions, AMOUNT_SCHEMA as AMOUNT, CuadraError, defineOperation, dropOperation, finishStaleOperations, isCuadraError, runOperation, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, type ToolContext, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { postEntry, reverseEntry, updateCounted, type JournalLine } from '../../books/index.ts';
import { rollupIntent } from '../../books/rollup-intents.ts';
import { PAYABLE_ACCOUNTS } from './accounts.ts';
import type { BillStatus } from './model.ts';
import { apCurrency, billStatusDelta, changeBill } from './ops.ts';

/** Bank accounts a payment may leave from (PUC 1110 bancos). */
export const PAYMENT_BANK_ACCOUNTS = { '111005': 'Bancos — moneda nacional', '111010': 'Bancos — moneda extranjera' } as const;

/** One part of a bill payment set against one bill. */
export interface BillAllocation {
  bill_id: string;
  supplier_number: string;
  /** What was asked for (null: the bill's whole open balance). */
  requested: number | null;
  /** What was applied; null until the payment is completed. */
  applied: number | null;
}

/**
 * A payment made to a vendor, recorded (not sent: sending money through a bank is a payment run's
 * `external` step). Written `pending` first (the intent), then applied to each bill (idempotent:
 * the bill lists the payment's id in its settlements), then `completed` with its journal entry
 * and rollup intent. A payment a dead process left `pending` is finished by
 * the maintenance sweep ({@link billPaymentOperation}), found through its operation marker, never by scanning payments.
 */
export interface BillPaymentDoc {
  _id: string;
  workspace: string;
  /** `reversed`: undone by a reversing entry (bank.unreconcile); the bills it paid are owed again. */
  status: 'pending' | 'completed' | 'reversed';
  vendor_id: string;
  vendor_name: string;
  search_lc: string;
  currency: string;
  amount: number;
  date: string;
  bank_account: keyof typeof PAYMENT_BANK_ACCOUNTS;
  reference: string | null;
  allocations: BillAllocation[];
  journal_entry_id: string | null;
  pending_rollups: unknown[];
  pending_count: number;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<BillPaymentDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    vendor_id: { type: String, required: true },
    vendor_name: { type: String, required: true },
    search_lc: { type: String, required: true },
    currency: { type: String, required: true },
    amount: { type: Number, required: true },
    date: { type: String, required: true },
    bank_account: { type: String, required: true },
    reference: { type: String, default: null },
    allocations: { type: Schema.Types.Mixed, required: true },
    journal_entry_id: { type: String, default: null },
    pending_rollups: { type: Schema.Types.Mixed, default: [] },
    pending_count: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(schema);

/** The bill payments collection. */
export function billPayments(db: Connection): Model<BillPaymentDoc> {
  return modelOn<BillPaymentDoc>(db, 'BillPayment', schema, 'bill_payments');
}


/** A payment made: Dr payables (the vendor owed less), Cr the bank account it left from. */
export function billPaymentEntryLines(p: Pick<BillPaymentDoc, 'amount' | 'vendor_id' | 'bank_account'>): JournalLine[] {
  return [
    { account: PAYABLE_ACCOUNTS.payables.code, name: PAYABLE_ACCOUNTS.payables.name, debit: p.amount, credit: 0, party_id: p.vendor_id },
    { account: p.bank_account, name: PAYMENT_BANK_ACCOUNTS[p.bank_account], debit: 0, credit: p.amount, party_id: null },
  ];
}

/** Status of a bill from its balance. */
export function settledStatus(balance: number, paid: number): BillStatus {
  if (balance <= 0) return 'paid';
  return paid > 0 ? 'partially_paid' : 'posted';
}

/** A bill payment while its operation runs: the payables it moved, by due date (recomputed by a rerun). */
type BillPaymentInFlight = BillPaymentDoc & { dueChanges?: { date: string; amount: number }[] };

/**
 * A payment to a vendor as a durable operation (shared/src/operations.ts): applied to its bills,
 * journalled, completed with its rollups. Every step may run again (a retry, the sweep finishing
 * a payment whose process died) without effect the second time. The payment was checked against
 * the bills' balances under the vendor's lock, so each application fits; a bill found settled
 * meanwhile (impossible under the lock, possible after a lease ran out) refuses the whole payment
 * before anything is booked rather than leave money unapplied.
 */
export const billPaymentOperation = defineOperation<BillPaymentInFlight>({
  kind: 'bill_payment',
  legacyMarkers: [{ collection: 'bill_payment_markers', record: (m) => m._id }],
  load: (ctx, id) => billPayments(ctx.db).findById(id).lean(),
  steps: [
    async function settleBills(ctx, payment) {
      const allocations: BillAllocation[] = [];
      const dueChanges: { date: string; amount: number }[] = [];
      for (const a of payment.allocations) {
        const after = await changeBill(ctx, a.bill_id, (bill) => {
          if (bill.settlements.some((s) => s.ref === payment._id)) return null;
          const amount = a.requested ?? bill.balance;
          if ((bill.status !== 'posted' && bill.status !== 'partially_paid') || amount > bill.balance) {
            throw new CuadraError('conflict', `Bill ${bill.supplier_number} has ${bill.balance} open; ${amount} cannot be applied to it.`);
          }
          const balance = bill.balance - amount;
          const paid = bill.paid + amount;
          const status = settledStatus(balance, paid);
          return {
            set: { balance, paid, status, closed_on: balance <= 0 ? payment.date : null },
            push: { settlements: { ref: payment._id, date: payment.date, amount } },
            deltas: billStatusDelta(bill, bill.status, status),
          };
        }).catch(async (err: unknown) => {
          // Refused at its first bill (held by a payment run, settled meanwhile): applied nowhere, since
          // bills are applied in order. The pending payment goes, so no repair keeps retrying it.
          if (!allocations.length && isCuadraError(err) && err.code === 'conflict' && payment.status === 'pending') {
            await billPayments(ctx.db).deleteOne({ _id: payment._id, workspace: ctx.workspace, status: 'pending' });
            await dropOperation(ctx, billPaymentOperation, payment._id);
          }
          throw err;
        });
        const applied = after.settlements.find((s) => s.ref === payment._id)?.amount ?? 0;
        allocations.push({ ...a, applied });
        dueChanges.push({ date: after.due_date, amount: -applied });
      }
      return { ...payment, allocations, dueChanges };
    },
    async function journal(ctx, payment) {
      await postEntry(ctx, { kind: 'bill_payment', id: payment._id }, billPaymentEntryLines(payment), {
        id: `je_${payment._id}`, date: payment.date, currency: payment.currency, memo: `Pago a proveedor ${payment.reference ?? payment._id} — ${payment.vendor_name}`,
      });
      return payment;
    },
    async function complete(ctx, payment) {
      const currency = apCurrency(payment.currency);
      const intent = rollupIntent([
        { day: payment.date, currency, inc: { ap: -payment.amount, disbursed: payment.amount, bill_payments: 1 } },
        ...(payment.dueChanges ?? []).map((due) => ({ day: payment.date, currency, inc: {}, due })),
      ], ctx.now);
      const model = billPayments(ctx.db);
      const done = await updateCounted(ctx, model, payment._id, { _id: payment._id, status: 'pending' }, { $set: { status: 'completed', allocations: payment.allocations, journal_entry_id: `je_${payment._id}`, updated_at: ctx.now } }, intent);
      const final = done ?? (await model.findById(payment._id).lean());
      if (!final) throw new CuadraError('internal', 'The bill payment vanished while being completed.');
      return final;
    },
  ],
});

/** Applies a pending payment to its bills and completes it (every step idempotent: see {@link billPaymentOperation}). */
export function completeBillPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, payment: BillPaymentDoc): Promise<BillPaymentDoc> {
  return runOperation(ctx, billPaymentOperation, payment, payment._id);
}

/** Finishes the bill payments of a workspace a dead process left pending (past the lease). */
export function completeStuckBillPayments(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>): Promise<number> {
  return finishStaleOperations(ctx.db, [billPaymentOperation], ctx.now, ctx.workspace);
}

/** JSON Schema of {@link billPaymentView}. */
export const BILL_PAYMENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'status', 'vendor_id', 'vendor_name', 'currency', 'amount', 'date', 'bank_account', 'reference', 'allocations', 'journal_entry_id', 'created_at'],
  properties: {
    id: TEXT, status: { enum: ['pending', 'completed', 'reversed'] }, vendor_id: TEXT, vendor_name: TEXT, currency: TEXT, amount: AMOUNT, date: DATE,
    bank_account: TEXT, reference: NULLABLE_TEXT,
    allocations: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['bill_id', 'supplier_number', 'requested', 'applied'],
        properties: { bill_id: TEXT, supplier_number: TEXT, requested: { type: ['integer', 'null'] }, applied: { type: ['integer', 'null'] } },
      },
    },
    journal_entry_id: NULLABLE_TEXT, created_at: DATE_TIME,
  },
} as const;

/** Public shape of a bill payment. */
export function billPaymentView(p: BillPaymentDoc) {
  return {
    id: p._id, status: p.status, vendor_id: p.vendor_id, vendor_name: p.vendor_name, currency: p.currency, amount: p.amount, date: p.date,
    bank_account: p.bank_account, reference: p.reference, allocations: p.allocations, journal_entry_id: p.journal_entry_id, created_at: new Date(p.created_at).toISOString(),
  };
}

/**
 * Reverses a completed bill payment (bank.unreconcile): each bill it settled owes the amount
 * again (a negative settlement dated `date`, so aging at any date stays right; nothing is
 * deleted), a reversing entry swaps its journal lines (Dr bank / Cr 220505), and the payment
 * becomes `reversed` with the payables rollups moved back — one conditional update
 * completed → reversed. Every step may run again without effect.
 */
export async function reverseBillPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, paymentId: string, date: string): Promise<BillPaymentDoc> {
  const model = billPayments(ctx.db);
  const payment = await model.findOne({ _id: paymentId, workspace: ctx.workspace }).lean();
  if (!payment) throw new CuadraError('not_found', `No bill payment ${paymentId} exists in this workspace.`);
  if (payment.status === 'reversed') return payment;
  if (payment.status !== 'completed') throw new CuadraError('conflict', `Bill payment ${paymentId} is ${payment.status}.`);
  const ref = `${payment._id}:rev`;
  const byDue: { date: string; amount: number }[] = [];
  for (const a of payment.allocations) {
    const amount = a.applied ?? 0;
    if (amount <= 0) continue;
    const after = await changeBill(ctx, a.bill_id, (bill) => {
      if (bill.settlements.some((s) => s.ref === ref)) return null;
      const balance = bill.balance + amount;
      const paid = bill.paid - amount;
      const status = settledStatus(balance, paid);
      return { set: { balance, paid, status, closed_on: null }, push: { settlements: { ref, date, amount: -amount } }, deltas: billStatusDelta(bill, bill.status, status) };
    });
    byDue.push({ date: after.due_date, amount });
  }
  await reverseEntry(ctx, `je_${payment._id}`, date, {
    id: `je_rev_${payment._id}`, memo: `Reversión del pago a proveedor ${payment.reference ?? payment._id} — ${payment.vendor_name}`,
  });
  const currency = apCurrency(payment.currency);
  const intent = rollupIntent([
    { day: date, currency, inc: { ap: payment.amount, disbursed: -payment.amount } },
    ...byDue.map((due) => ({ day: date, currency, inc: {}, due })),
  ], ctx.now);
  const done = await updateCounted(ctx, model, payment._id, { _id: payment._id, workspace: ctx.workspace, status: 'completed' }, { $set: { status: 'reversed', updated_at: ctx.now } }, intent);
  return done ?? (await model.findById(payment._id).lean())!;
}
