import { beginOperation, CuadraError, type ToolContext } from '@cuadra/shared';
import { paymentEntryLines } from '../../accounting/receivable-lines.ts';
import { RECEIVABLES } from '../../lib/invoice-ops.ts';
import { addCustomerCredit } from '../../lib/customer-credit.ts';
import type { InvoiceDoc } from '../invoices/model.ts';
import { payments, type PaymentDoc } from './model.ts';
import { definePaymentOperation, settleAllocations, type PaymentLedger } from '../../open-items/index.ts';

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
 * A customer payment as a durable operation (shared/src/operations.ts): written `pending`, then
 * applied to its invoices — each takes what is asked, at most its balance and what is left; one
 * settled meanwhile takes nothing, and the rest becomes credit —, journalled, completed with its
 * rollups, and its leftover kept as customer credit (once per payment). Every step may run again
 * without effect the second time.
 */
export const paymentOperation = definePaymentOperation(
  CUSTOMER_PAYMENTS,
  { kind: 'payment', legacyMarkers: [{ collection: 'pending_changes', filter: { kind: 'payment' }, record: (m) => m.doc ?? m._id.replace(/^pay:/, '') }] },
  async function settleInvoices(ctx, payment) {
    const { settled, left, dueChanges } = await settleAllocations(ctx, CUSTOMER_PAYMENTS, payment, (inv, a, rest) => {
      if (inv.status !== 'posted' && inv.status !== 'partially_paid') return null; // settled meanwhile: the rest becomes credit
      // A race may have lowered the balance since the payment was checked: never apply beyond it.
      return Math.min(a.requested ?? inv.balance, inv.balance, rest);
    });
    const allocations = settled.map(({ allocation, item, applied }) => ({ ...allocation, number: item.number, applied }));
    return { ...payment, allocations, applied: payment.amount - left, unapplied: left, dueChanges };
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
