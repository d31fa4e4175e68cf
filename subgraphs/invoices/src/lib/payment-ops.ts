import { beginOperation, CuadraError, defineOperation, runOperation, type ToolContext } from '@cuadra/shared';
import { paymentEntryLines } from '../accounting/receivable-lines.ts';
import { postEntry, reverseEntry, updateCounted } from '../books/index.ts';
import { changeInvoice, settledStatus, statusDelta } from './invoice-ops.ts';
import { addCustomerCredit } from './customer-credit.ts';
import type { InvoiceDoc, Settlement } from '../modules/invoices/model.ts';
import { payments, type PaymentDoc } from '../modules/payments/model.ts';
import { rollupIntent } from '../books/rollup-intents.ts';

/** A payment while its operation runs: the receivables it moved, by due date (recomputed by a rerun). */
type PaymentInFlight = PaymentDoc & { dueChanges?: { date: string; amount: number }[] };

/**
 * A customer payment as a durable operation (shared/src/operations.ts): written `pending`, then
 * applied to its invoices, journalled, completed with its rollups, and its leftover kept as
 * customer credit. Every step may run again (a retry, or the sweep finishing a payment whose
 * process died) without effect the second time: an invoice that already lists the payment in its
 * settlements is left alone, the journal entry's id is the payment's, completion is a conditional
 * update on `status: 'pending'`, and customer credit is added once per payment.
 */
export const paymentOperation = defineOperation<PaymentInFlight>({
  kind: 'payment',
  legacyMarkers: [{ collection: 'pending_changes', filter: { kind: 'payment' }, record: (m) => m.doc ?? m._id.replace(/^pay:/, '') }],
  load: (ctx, id) => payments(ctx.db).findById(id).lean(),
  steps: [
    async function settleInvoices(ctx, payment) {
      let left = payment.amount;
      const allocations = [];
      const dueChanges: { date: string; amount: number }[] = [];
      for (const a of payment.allocations) {
        const after = await changeInvoice(ctx, a.invoice_id, (inv: InvoiceDoc) => {
          if (inv.settlements.some((s) => s.ref === payment._id)) return null;
          if (inv.status !== 'posted' && inv.status !== 'partially_paid') return null; // settled meanwhile: the rest becomes credit
          // A race may have lowered the balance since the payment was checked: never apply beyond it.
          const amount = Math.min(a.requested ?? inv.balance, inv.balance, left);
          if (amount <= 0) return null;
          const balance = inv.balance - amount;
          const paid = inv.paid + amount;
          const status = settledStatus({ balance, paid, status: inv.status });
          const settlement: Settlement = { ref: payment._id, kind: 'payment', date: payment.date, amount };
          return { set: { balance, paid, status, closed_on: balance <= 0 ? payment.date : null }, push: { settlements: settlement }, deltas: statusDelta(inv, inv.status, status) };
        });
        const applied = after.settlements.find((s) => s.ref === payment._id)?.amount ?? 0;
        left -= applied;
        allocations.push({ ...a, number: after.number, applied });
        if (applied > 0) dueChanges.push({ date: after.due_date, amount: -applied });
      }
      return { ...payment, allocations, applied: payment.amount - left, unapplied: left, dueChanges };
    },
    async function journal(ctx, payment) {
      await postEntry(ctx, { kind: 'payment', id: payment._id }, paymentEntryLines(payment.amount, payment.applied, payment.customer_id), {
        id: paymentEntryId(payment._id), date: payment.date, currency: payment.currency, memo: `Recaudo ${payment.reference ?? payment._id} — ${payment.customer_name}`,
      });
      return payment;
    },
    async function complete(ctx, payment) {
      const intent = rollupIntent([
        { day: payment.date, currency: payment.currency, inc: { collected: payment.amount, ar: -payment.applied, payments: 1 } },
        ...(payment.dueChanges ?? []).map((due) => ({ day: payment.date, currency: payment.currency, inc: {}, due })),
      ], ctx.now);
      const model = payments(ctx.db);
      const done = await updateCounted(ctx, model, payment._id, { _id: payment._id, status: 'pending' }, { $set: { status: 'completed', allocations: payment.allocations, applied: payment.applied, unapplied: payment.unapplied, journal_entry_id: paymentEntryId(payment._id), updated_at: ctx.now } }, intent);
      const final = done ?? (await model.findById(payment._id).lean());
      if (!final) throw new CuadraError('internal', 'The payment vanished while being completed.');
      return final;
    },
    async function keepCredit(ctx, payment) {
      await addCustomerCredit(ctx.db, ctx.workspace, payment.customer_id, payment.currency, payment._id, payment.unapplied);
      return payment;
    },
  ],
});

/** The journal entry of a payment: its id chosen from the payment's, so posting it twice is one entry. */
function paymentEntryId(paymentId: string): string {
  return `je_${paymentId}`;
}

/** Applies a pending payment to its invoices and completes it (every step idempotent: see {@link paymentOperation}). */
export function completePayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, payment: PaymentDoc): Promise<PaymentDoc> {
  return runOperation(ctx, paymentOperation, payment, payment._id);
}

/** Registers a payment about to be written, so a dead process's payment is found and finished by the sweep. */
export function markPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, paymentId: string): Promise<void> {
  return beginOperation(ctx, paymentOperation, paymentId);
}

/**
 * Reverses a completed customer payment (bank.unreconcile): each invoice it paid owes the amount
 * again (a negative settlement dated `date`, so aging at any date stays right; nothing is
 * deleted), a reversing entry swaps its journal lines, and the payment becomes `reversed` with
 * the receivables rollups moved back — one conditional update completed → reversed. A payment
 * that left customer credit is refused (the credit may have been used). Each step may run again
 * without effect.
 */
export async function reversePayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, paymentId: string, date: string): Promise<PaymentDoc> {
  const model = payments(ctx.db);
  const payment = await model.findOne({ _id: paymentId, workspace: ctx.workspace }).lean();
  if (!payment) throw new CuadraError('not_found', `No payment ${paymentId} exists in this workspace.`);
  if (payment.status === 'reversed') return payment;
  if (payment.status !== 'completed') throw new CuadraError('conflict', `Payment ${paymentId} is ${payment.status}.`);
  if (payment.unapplied > 0) throw new CuadraError('conflict', `Payment ${paymentId} left ${payment.unapplied} as customer credit; it cannot be reversed here.`);
  const ref = `${payment._id}:rev`;
  const byDue: { date: string; amount: number }[] = [];
  for (const a of payment.allocations) {
    const amount = a.applied ?? 0;
    if (amount <= 0) continue;
    const after = await changeInvoice(ctx, a.invoice_id, (inv: InvoiceDoc) => {
      if (inv.settlements.some((s) => s.ref === ref)) return null;
      const balance = inv.balance + amount;
      const paid = inv.paid - amount;
      const status = settledStatus({ balance, paid, status: inv.status === 'paid' ? 'partially_paid' : inv.status });
      const settlement: Settlement = { ref, kind: 'payment', date, amount: -amount };
      return { set: { balance, paid, status, closed_on: null }, push: { settlements: settlement }, deltas: statusDelta(inv, inv.status, status) };
    });
    byDue.push({ date: after.due_date, amount });
  }
  await reverseEntry(ctx, payment.journal_entry_id ?? `je_${payment._id}`, date, {
    id: `je_rev_${payment._id}`, memo: `Reversión del recaudo ${payment.reference ?? payment._id} — ${payment.customer_name}`,
  });
  const intent = rollupIntent([
    { day: date, currency: payment.currency, inc: { collected: -payment.amount, ar: payment.applied } },
    ...byDue.map((due) => ({ day: date, currency: payment.currency, inc: {}, due })),
  ], ctx.now);
  const done = await updateCounted(ctx, model, payment._id, { _id: payment._id, workspace: ctx.workspace, status: 'completed' }, { $set: { status: 'reversed', updated_at: ctx.now } }, intent);
  return done ?? (await model.findById(payment._id).lean())!;
}
