import { CuadraError, type ToolContext } from '@cuadra/shared';
import { paymentEntryLines } from '../accounting/receivable-lines.ts';
import { postEntry, reverseEntry } from '../books/index.ts';
import { changeInvoice, settledStatus, statusDelta } from './invoice-ops.ts';
import { addCustomerCredit } from './customer-credit.ts';
import type { InvoiceDoc, Settlement } from '../modules/invoices/model.ts';
import { payments, type PaymentDoc } from '../modules/payments/model.ts';
import { pendingChanges } from '../books/rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, rollupIntent, REPAIR_AFTER_MS } from '../books/rollup-intents.ts';

/**
 * Applies a pending payment to its invoices and completes it. Every step may run again
 * (a retry, or the repair of a payment whose process died) without effect the second time:
 * an invoice that already lists the payment in its settlements is left alone, the journal entry's
 * id is the payment's, customer credit is added once per payment, and completion is a
 * conditional update on `status: 'pending'`.
 */
export async function completePayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, payment: PaymentDoc): Promise<PaymentDoc> {
  let left = payment.amount;
  const allocations = [];
  const byDue: { date: string; amount: number }[] = [];
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
    if (applied > 0) byDue.push({ date: after.due_date, amount: -applied });
  }
  const applied = payment.amount - left;
  const entryId = `je_${payment._id}`;
  await postEntry(ctx, { kind: 'payment', id: payment._id }, paymentEntryLines(payment.amount, applied, payment.customer_id), {
    id: entryId, date: payment.date, currency: payment.currency, memo: `Recaudo ${payment.reference ?? payment._id} — ${payment.customer_name}`,
  });
  const intent = rollupIntent([
    { day: payment.date, currency: payment.currency, inc: { collected: payment.amount, ar: -applied, payments: 1 } },
    ...byDue.map((due) => ({ day: payment.date, currency: payment.currency, inc: {}, due })),
  ], ctx.now);
  const iu = intentUpdate(intent);
  const model = payments(ctx.db);
  await markIntent(ctx.db, ctx.workspace, model, payment._id, intent);
  const done = await model.findOneAndUpdate(
    { _id: payment._id, status: 'pending' },
    { $set: { status: 'completed', allocations, applied, unapplied: left, journal_entry_id: entryId, updated_at: ctx.now }, $inc: iu.$inc ?? {}, ...(iu.$push ? { $push: iu.$push } : {}) },
    { returnDocument: 'after' },
  ).lean();
  if (done) await applyRollupIntent(ctx.db, model, payment._id, ctx.workspace, intent);
  else if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
  await addCustomerCredit(ctx.db, ctx.workspace, payment.customer_id, payment.currency, payment._id, left);
  await pendingChanges(ctx.db).deleteOne({ _id: paymentMarker(payment._id) });
  const final = done ?? (await model.findById(payment._id).lean());
  if (!final) throw new CuadraError('internal', 'The payment vanished while being completed.');
  return final;
}

/** Id of the pending-changes marker of a payment, written before the payment itself. */
export function paymentMarker(paymentId: string): string {
  return `pay:${paymentId}`;
}

/** Registers a payment about to be written, so a dead process's payment is found and finished. */
export async function markPayment(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, paymentId: string): Promise<void> {
  await pendingChanges(ctx.db).create({ _id: paymentMarker(paymentId), workspace: ctx.workspace, kind: 'payment', collection: 'payments', doc: paymentId, at: ctx.now });
}

/** Finishes payments left pending by a process that died (older than a minute), found by their markers. */
export async function completeStuckPayments(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>): Promise<number> {
  const markers = await pendingChanges(ctx.db).find({ workspace: ctx.workspace, kind: 'payment' }).limit(100).lean();
  let completed = 0;
  for (const m of markers) {
    if (ctx.now.getTime() - new Date(m.at).getTime() < REPAIR_AFTER_MS) continue;
    const p = await payments(ctx.db).findById(m.doc).lean();
    if (p) {
      // Every step of completion is idempotent, so a completed payment whose marker survived
      // (a crash before its customer credit) is simply finished again.
      await completePayment(ctx, p);
      completed++;
    } else {
      await pendingChanges(ctx.db).deleteOne({ _id: m._id });
    }
  }
  return completed;
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
  const iu = intentUpdate(intent);
  await markIntent(ctx.db, ctx.workspace, model, payment._id, intent);
  const done = await model.findOneAndUpdate(
    { _id: payment._id, workspace: ctx.workspace, status: 'completed' },
    { $set: { status: 'reversed', updated_at: ctx.now }, $inc: iu.$inc ?? {}, ...(iu.$push ? { $push: iu.$push } : {}) },
    { returnDocument: 'after' },
  ).lean();
  if (done) await applyRollupIntent(ctx.db, model, payment._id, ctx.workspace, intent);
  else if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
  return done ?? (await model.findById(payment._id).lean())!;
}
