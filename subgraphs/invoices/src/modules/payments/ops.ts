import { beginOperation, CuadraError, type ToolContext } from '@cuadra/shared';
import { previewEntry, type PostingPreview } from '../../books/index.ts';
import { paymentEntryLines } from '../../accounting/receivable-lines.ts';
import { RECEIVABLES } from '../invoices/ops.ts';
import { addCustomerCredit } from '../../lib/customer-credit.ts';
import type { InvoiceDoc } from '../invoices/model.ts';
import { payments, type PaymentDoc } from './model.ts';
import { definePaymentOperation, paymentEntry, previewAllocations, settleAllocations, type PaymentLedger, type SettledAllocation } from '../../open-items/index.ts';
import type { Allocation } from './model.ts';

/**
 * Customer payments as the payment engine sees them (open-items/payment.ts): they settle the
 * receivables, book Dr bank / Cr 130505, count `collected` and `ar`, and keep what no invoice takes
 * as customer credit — which is why one that left credit is not reversed here (it may be spent).
 */
export const CUSTOMER_PAYMENTS: PaymentLedger<PaymentDoc, InvoiceDoc> = {
  items: RECEIVABLES,
  noun: 'payment',
  model: payments,
  itemOf: (a) => a.invoice_id,
  rollupCurrency: (currency) => currency,
  sourceKind: 'payment',
  entryLines: (p) => paymentEntryLines(p.amount, p.applied, p.customer_id),
  memo: (p) => `Recaudo ${p.reference ?? p._id} — ${p.customer_name}`,
  reversalMemo: (p) => `Reversión del recaudo ${p.reference ?? p._id} — ${p.customer_name}`,
  completion: (p) => ({ inc: { collected: p.amount, ar: -p.applied, payments: 1 }, set: { applied: p.applied, unapplied: p.unapplied } }),
  reversal: (p) => ({ collected: -p.amount, ar: p.applied }),
  refuseReversal: (p) => p.unapplied > 0 ? new CuadraError('conflict', `Payment ${p._id} left ${p.unapplied} as customer credit; it cannot be reversed here.`) : null,
};

/**
 * How much of a customer payment an invoice takes when `left` of it remains — the operation's rule
 * and its dry run's: what is asked, at most the invoice's balance and what is left; an invoice no
 * longer open (settled meanwhile) takes nothing, so the rest becomes credit.
 */
function invoiceShare(inv: InvoiceDoc, a: Allocation, left: number): number | null {
  if (inv.status !== 'posted' && inv.status !== 'partially_paid') return null;
  // A race may have lowered the balance since the payment was checked: never apply beyond it.
  return Math.min(a.requested ?? inv.balance, inv.balance, left);
}

/** The payment's allocations as settled: each with its invoice's number and what it took. */
function settledAllocations(settled: SettledAllocation<Allocation, InvoiceDoc>[]): Allocation[] {
  return settled.map(({ allocation, item, applied }) => ({ ...allocation, number: item.number, applied }));
}

/**
 * A customer payment as a durable operation (shared/src/operations.ts): written `pending`, then
 * applied to its invoices — each takes what is asked, at most its balance and what is left; one
 * settled meanwhile takes nothing, and the rest becomes credit —, journalled, completed with its
 * rollups, and its leftover kept as customer credit (once per payment). Every step may run again
 * without effect the second time.
 */
export const paymentOperation = definePaymentOperation(
  CUSTOMER_PAYMENTS,
  { kind: 'payment', lock: (workspace, p) => `payments:${workspace}:${p.customer_id}`, legacyMarkers: [{ collection: 'pending_changes', filter: { kind: 'payment' }, record: (m) => m.doc ?? m._id.replace(/^pay:/, '') }] },
  async function settleInvoices(ctx, payment) {
    const { settled, left, dueChanges } = await settleAllocations(ctx, CUSTOMER_PAYMENTS, payment, invoiceShare);
    return { ...payment, allocations: settledAllocations(settled), applied: payment.amount - left, unapplied: left, dueChanges };
  },
  [
    async function keepCredit(ctx, payment) {
      await addCustomerCredit(ctx.db, ctx.workspace, payment.customer_id, payment.currency, payment._id, payment.unapplied);
      return payment;
    },
  ],
);

/** Registers a payment about to be written, so a dead process's payment is found and finished by the sweep. */
export function markPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, paymentId: string): Promise<void> {
  return beginOperation(ctx, paymentOperation, paymentId);
}

/**
 * What registering `payment` (checked, not yet written) would do, read only — the dry run of
 * `payments.register`, and what a held payment shows the person deciding: each invoice's balance and
 * status after what the operation's settle step would apply (the engine's previewAllocations with
 * {@link invoiceShare}, the same rule), the journal entry its journal step would post (the engine's
 * paymentEntry), the payment as it would be stored and any leftover kept as customer credit.
 */
export async function previewPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, payment: PaymentDoc): Promise<PostingPreview> {
  const { settled, left, changes } = await previewAllocations(ctx, CUSTOMER_PAYMENTS, payment, invoiceShare);
  const done: PaymentDoc = { ...payment, allocations: settledAllocations(settled), applied: payment.amount - left, unapplied: left };
  const entry = paymentEntry(CUSTOMER_PAYMENTS, done);
  changes.unshift({
    source: 'payments', id: done._id, op: 'insert',
    after: { status: 'completed', customer_id: done.customer_id, amount: done.amount, currency: done.currency, date: done.date, allocations: done.allocations, applied: done.applied, unapplied: done.unapplied, journal_entry_id: entry.heading.id },
  });
  changes.push(await previewEntry(ctx, entry.source, entry.lines, entry.heading));
  if (done.unapplied > 0) changes.push({ source: 'customer_credits', id: `${ctx.workspace}|${done.customer_id}|${done.currency}`, op: 'update', after: { added: done.unapplied, ref: done._id } });
  return { changes, journal_lines: entry.lines };
}
