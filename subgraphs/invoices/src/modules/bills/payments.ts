import { addPositions, AMOUNT_SCHEMA as AMOUNT, CuadraError, dropOperation, isCuadraError, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, modelOn, type ToolContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { previewEntry, type JournalLine, type PostingPreview } from '../../books/index.ts';
import { definePaymentOperation, PAYMENT_RECORD_FIELDS, paymentEntry, previewAllocations, settleAllocations, type PaymentLedger, type PaymentRecord } from '../../open-items/index.ts';
import { PAYABLE_ACCOUNTS, PAYMENT_BANK_ACCOUNTS } from '../../accounting/payable-accounts.ts';
import type { BillDoc } from './model.ts';
import { payablesRollupCurrency, PAYABLES } from './ops.ts';

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
export interface BillPaymentDoc extends PaymentRecord<BillAllocation> {
  vendor_id: string;
  vendor_name: string;
  search_lc: string;
  bank_account: keyof typeof PAYMENT_BANK_ACCOUNTS;
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
    ...PAYMENT_RECORD_FIELDS,
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

/**
 * Bill payments as the payment engine sees them (open-items/payment.ts): they settle the payables,
 * book Dr 220505 / Cr the bank account, and count `ap` and `disbursed` under the payables' rollup namespace.
 */
export const BILL_PAYMENTS: PaymentLedger<BillPaymentDoc, BillDoc> = {
  items: PAYABLES,
  noun: 'bill payment',
  model: billPayments,
  itemOf: (a) => a.bill_id,
  rollupCurrency: payablesRollupCurrency,
  sourceKind: 'bill_payment',
  entryLines: billPaymentEntryLines,
  memo: (p) => `Pago a proveedor ${p.reference ?? p._id} — ${p.vendor_name}`,
  reversalMemo: (p) => `Reversión del pago a proveedor ${p.reference ?? p._id} — ${p.vendor_name}`,
  completion: (p) => ({ inc: { ap: -p.amount, disbursed: p.amount, bill_payments: 1 } }),
  reversal: (p) => ({ ap: p.amount, disbursed: -p.amount }),
};

/** How much of a payment a bill takes: what the payment asked for it, or its open balance; more than is open is refused. */
export function billShare(bill: BillDoc, a: BillAllocation): number {
  const amount = a.requested ?? bill.balance;
  if ((bill.status !== 'posted' && bill.status !== 'partially_paid') || amount > bill.balance) {
    throw new CuadraError('conflict', `Bill ${bill.supplier_number} has ${bill.balance} open; ${amount} cannot be applied to it.`);
  }
  return amount;
}

/**
 * What completing a planned bill payment would do, read only (the dry run of `bills.pay`, and the
 * preview a held payment shows the person deciding): the engine's {@link previewAllocations} with
 * the operation's own {@link billShare}, the payment as it would be stored, and its journal entry
 * by {@link previewEntry} (a closed period refuses as the payment would).
 */
export async function previewBillPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, payment: BillPaymentDoc): Promise<PostingPreview> {
  const { settled, changes } = await previewAllocations(ctx, BILL_PAYMENTS, payment, billShare);
  const done: BillPaymentDoc = { ...payment, status: 'completed', allocations: settled.map(({ allocation, applied }) => ({ ...allocation, applied })) };
  const entry = paymentEntry(BILL_PAYMENTS, done);
  changes.unshift({
    source: 'bill_payments', id: done._id, op: 'insert',
    after: { status: 'completed', vendor_id: done.vendor_id, amount: done.amount, currency: done.currency, date: done.date, bank_account: done.bank_account, allocations: done.allocations, journal_entry_id: entry.heading.id },
  });
  changes.push(await previewEntry(ctx, entry.source, entry.lines, entry.heading));
  return { changes, journal_lines: entry.lines };
}

/**
 * A payment to a vendor as a durable operation (shared/src/operations.ts): applied to its bills,
 * journalled, completed with its rollups. Every step may run again (a retry, the sweep finishing
 * a payment whose process died) without effect the second time. The payment was checked against
 * the bills' balances under the vendor's lock, so each application fits; a bill found settled
 * meanwhile (impossible under the lock, possible after a lease ran out) refuses the whole payment
 * before anything is booked rather than leave money unapplied.
 */
export const billPaymentOperation = definePaymentOperation(
  BILL_PAYMENTS,
  // The lock is bills.pay's (vendorPaymentLock, tools/pay.ts).
  { kind: 'bill_payment', lock: (workspace, p) => `bills:pay:${workspace}:${p.vendor_id}`, legacyMarkers: [{ collection: 'bill_payment_markers', record: (m) => m._id }] },
  async function settleBills(ctx, payment) {
    const { settled, dueChanges } = await settleAllocations(ctx, BILL_PAYMENTS, payment, billShare, async (err, settledBefore) => {
      // Refused at its first bill (held by a payment run, settled meanwhile): applied nowhere, since
      // bills are applied in order. The pending payment goes, so no repair keeps retrying it.
      if (!settledBefore && isCuadraError(err) && err.code === 'conflict' && payment.status === 'pending') {
        await billPayments(ctx.db).deleteOne({ _id: payment._id, workspace: ctx.workspace, status: 'pending' });
        await dropOperation(ctx, billPaymentOperation, payment._id);
      }
    });
    return { ...payment, allocations: settled.map(({ allocation, applied }) => ({ ...allocation, applied })), dueChanges };
  },
);

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
