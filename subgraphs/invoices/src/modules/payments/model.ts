import { addPositions, searchIn, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { RollupIntent } from '../../books/rollup-intents.ts';
import { PAYMENT_RECORD_FIELDS, type PaymentRecord } from '../../open-items/index.ts';

/** One part of a payment set against one invoice. */
export interface Allocation {
  invoice_id: string;
  number: string | null;
  /** What the caller asked to apply (null: as much as the invoice's balance and the payment allow). */
  requested: number | null;
  /** What was applied; null until the payment is completed. */
  applied: number | null;
}

/**
 * A payment received from a customer. Registered as `pending` first (the intent), then applied
 * to each invoice (each application is idempotent: the invoice lists the payment's id in its
 * settlements), then `completed` with its journal entry and rollup intent. A payment left
 * `pending` by a dead process is finished by the maintenance sweep (the durable-operation runner:
 * `paymentOperation`, modules/payments/ops.ts).
 */
export interface PaymentDoc extends PaymentRecord<Allocation> {
  direction: 'incoming';
  customer_id: string;
  customer_name: string;
  search_lc: string;
  method: string;
  applied: number;
  /** Kept as customer credit (over-payment). */
  unapplied: number;
  pending_rollups: RollupIntent[];
}

const paymentSchema = new Schema<PaymentDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    direction: { type: String, required: true },
    status: { type: String, required: true },
    customer_id: { type: String, required: true },
    customer_name: { type: String, required: true },
    search_lc: { type: String, required: true },
    currency: { type: String, required: true },
    amount: { type: Number, required: true },
    date: { type: String, required: true },
    method: { type: String, required: true },
    reference: { type: String, default: null },
    allocations: { type: Schema.Types.Mixed, required: true },
    applied: { type: Number, required: true },
    unapplied: { type: Number, required: true },
    ...PAYMENT_RECORD_FIELDS,
  },
  { versionKey: false, minimize: false },
);
paymentSchema.index({ workspace: 1, created_at: -1 });
paymentSchema.index({ workspace: 1, status: 1 });
paymentSchema.index({ workspace: 1, pending_count: 1 });
// Lists page newest first by position (CONTRACT §9).
addPositions(paymentSchema);

/** The payments collection. */
export function payments(db: Connection): Model<PaymentDoc> {
  return modelOn<PaymentDoc>(db, 'Payment', paymentSchema, 'payments');
}

/** How a payment was received (payments.register's `method`). */
export const PAYMENT_METHODS = ['bank_transfer', 'cash', 'card', 'check', 'pse', 'other'] as const;

const NULLABLE_AMOUNT = { type: ['integer', 'null'] } as const;

/** JSON Schema of {@link paymentView}: what every tool answering a payment gives. */
export const PAYMENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'direction', 'status', 'customer_id', 'customer_name', 'currency', 'amount', 'date', 'method', 'reference', 'allocations', 'applied', 'unapplied', 'journal_entry_id', 'created_at'],
  properties: {
    id: { type: 'string' },
    direction: { const: 'incoming' },
    status: { enum: ['pending', 'completed', 'reversed'] },
    customer_id: { type: 'string' },
    customer_name: { type: 'string' },
    currency: { type: 'string' },
    amount: { type: 'integer' },
    date: { type: 'string', format: 'date' },
    method: { enum: [...PAYMENT_METHODS] },
    reference: { type: ['string', 'null'] },
    allocations: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['invoice_id', 'number', 'requested', 'applied'],
        properties: { invoice_id: { type: 'string' }, number: { type: ['string', 'null'] }, requested: NULLABLE_AMOUNT, applied: NULLABLE_AMOUNT },
      },
    },
    applied: { type: 'integer' },
    unapplied: { type: 'integer' },
    journal_entry_id: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** Public shape of a payment. */
export function paymentView(p: PaymentDoc) {
  return {
    id: p._id, direction: p.direction, status: p.status, customer_id: p.customer_id, customer_name: p.customer_name, currency: p.currency,
    amount: p.amount, date: p.date, method: p.method, reference: p.reference, allocations: p.allocations, applied: p.applied,
    unapplied: p.unapplied, journal_entry_id: p.journal_entry_id, created_at: p.created_at.toISOString(),
  };
}

/** Whether a payment matches a lower-cased search term (customer name, reference): the records source `payments`. */
export const paymentMatches = searchIn<PaymentDoc>('search_lc');
