import { CuadraError, defineOperation, dropOperation, isCuadraError, withLock, type ToolContext } from '@cuadra/shared';
import { blockingHold, heldRefusal } from '../bills/holds.ts';
import { bills } from '../bills/model.ts';
import { changeBill } from '../bills/ops.ts';
import { payBills, vendorPaymentLock } from '../bills/tools/pay.ts';
import { claimKey, OPEN_RUN_STATUSES, paymentRunClaims, paymentRuns, type PaymentRunDoc, type PaymentRunStatus } from './model.ts';

/** A run of this workspace, or `not_found`. */
export async function findRun(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<PaymentRunDoc> {
  const run = await paymentRuns(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!run) throw new CuadraError('not_found', `No payment run ${id} exists in this workspace.`);
  return run;
}

/**
 * Moves a run from one of `from` to `to` by one conditional update, or explains why not: the run
 * does not exist (`not_found`) or is in another status (`conflict`).
 */
export async function transitionRun(
  ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, id: string, from: readonly PaymentRunStatus[], to: PaymentRunStatus,
  set: Partial<PaymentRunDoc> = {}, extra: Record<string, unknown> = {}, push?: Record<string, unknown>,
): Promise<PaymentRunDoc> {
  const after = await paymentRuns(ctx.db).findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, status: { $in: [...from] }, ...extra },
    { $set: { ...set, status: to, updated_at: ctx.now }, ...(push ? { $push: push } : {}) },
    { returnDocument: 'after' },
  ).lean();
  if (after) return after;
  const run = await findRun(ctx, id);
  if (!from.includes(run.status)) throw new CuadraError('conflict', `Payment run ${id} is ${run.status}; this needs it ${from.join(' or ')}.`);
  throw new CuadraError('conflict', `Payment run ${id} is being changed by another call right now; try again.`);
}

/**
 * Claims a bill for a run. A claim held by a run that is gone or no longer open (a crash while
 * making it, or a run since closed whose release did not happen) is taken over; one held by an
 * open run is not: the answer is false.
 */
export async function claimBill(ctx: Pick<ToolContext, 'db' | 'workspace'>, billId: string, runId: string): Promise<boolean> {
  const claims = paymentRunClaims(ctx.db);
  const _id = claimKey(ctx.workspace, billId);
  try {
    await claims.create({ _id, workspace: ctx.workspace, run_id: runId });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  const held = await claims.findById(_id).lean();
  if (!held) return claimBill(ctx, billId, runId);
  if (held.run_id === runId) return true;
  const holder = await paymentRuns(ctx.db).findOne({ _id: held.run_id, workspace: ctx.workspace }).lean();
  if (holder && OPEN_RUN_STATUSES.includes(holder.status)) return false;
  const taken = await claims.updateOne({ _id, run_id: held.run_id }, { $set: { run_id: runId } });
  return taken.modifiedCount === 1;
}

/** Releases the claims of a run (confirmed or cancelled): its bills may go into another run. */
export async function releaseClaims(ctx: Pick<ToolContext, 'db' | 'workspace'>, run: Pick<PaymentRunDoc, '_id' | 'lines'>): Promise<void> {
  await paymentRunClaims(ctx.db).deleteMany({ _id: { $in: run.lines.map((l) => claimKey(ctx.workspace, l.bill_id)) }, run_id: run._id });
}

/**
 * Checks, before anything is paid, that every bill can still take its payment: it is posted or
 * partially paid with at least the run's amount open, or this run's payment is already applied to
 * it (a confirm resumed after a crash). A bill paid meanwhile by another path is refused here,
 * so a confirm never pays part of a run and then stops.
 */
export async function checkBillsPayable(ctx: Pick<ToolContext, 'db' | 'workspace'>, run: PaymentRunDoc): Promise<void> {
  const found = new Map((await bills(ctx.db).find({ _id: { $in: run.lines.map((l) => l.bill_id) }, workspace: ctx.workspace }).lean()).map((b) => [b._id, b]));
  for (const l of run.lines) {
    const bill = found.get(l.bill_id);
    if (!bill) throw new CuadraError('conflict', `Bill ${l.supplier_number} of this run no longer exists.`);
    if (bill.settlements.some((s) => s.ref === l.payment_id)) continue;
    if ((bill.status !== 'posted' && bill.status !== 'partially_paid') || bill.balance < l.amount) {
      throw new CuadraError('conflict', `Bill ${l.supplier_number} has ${bill.balance} open (${bill.status}) but the run pays ${l.amount}: it was paid or changed outside the run. Cancel the run and make a new one.`);
    }
  }
}

/**
 * The confirm of a run as a durable operation (shared/src/operations.ts), begun before the run
 * becomes `confirming`; its steps, each idempotent:
 * 1. every bill paid through the bills module's payment path (`payBills`), each under the payment
 *    id the run chose when it was made: a payment already recorded is answered as it is, so a
 *    confirm retried, resumed or finished by the maintenance sweep pays each bill exactly once. Each
 *    payment writes its own journal entry (Dr 220505 proveedores, Cr the run's 1110 bank account);
 * 2. confirming → confirmed (a run found confirmed already stays as it is);
 * 3. the bills' claims released.
 * A run found in neither status (its confirm never began: another call moved it first) ends the
 * operation undone: nothing was paid.
 */
export const confirmOperation = defineOperation<PaymentRunDoc>({
  kind: 'payment_run_confirm',
  load: (ctx, id) => paymentRuns(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean(),
  steps: [
    async function payEachBill(ctx, run) {
      if (run.status === 'confirmed') return run;
      if (run.status !== 'confirming') {
        await dropOperation(ctx, confirmOperation, run._id);
        throw new CuadraError('conflict', `Payment run ${run._id} is ${run.status}; only an exported run is confirmed.`);
      }
      for (const l of run.lines) {
        await payBills(ctx, {
          vendor_id: l.vendor_id, amount: l.amount, currency: run.currency, date: run.paid_on ?? run.payment_date, bank_account: run.bank_account,
          reference: `${run._id} ${l.supplier_number}`.slice(0, 100), bills: [{ bill_id: l.bill_id, amount: l.amount }],
        }, { id: l.payment_id, vendor: { name: l.vendor_name } });
      }
      return run;
    },
    async function markConfirmed(ctx, run) {
      if (run.status === 'confirmed') return run;
      try {
        return await transitionRun(ctx, run._id, ['confirming'], 'confirmed', { confirmed_at: ctx.now });
      } catch (err) {
        // A concurrent resume got there first: the same outcome.
        const now = await findRun(ctx, run._id);
        if (now.status === 'confirmed') return now;
        throw err;
      }
    },
    async function releaseBills(ctx, run) {
      await releaseClaims(ctx, run);
      return run;
    },
  ],
});

/**
 * Holds every bill of a run for its bank file (bills/holds.ts): each bill, still open for at least
 * what the run pays, is marked by one conditional write on its revision, under the same per-vendor
 * lock payments take. From then on every other settlement of it is refused; a payment that got
 * there first makes this refuse, naming the bill. One vendor at a time (never two locks at once).
 * On a refusal the holds this call set are released again: nothing is left half-held.
 */
export async function holdRunBills(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, run: PaymentRunDoc): Promise<void> {
  const byVendor = new Map<string, PaymentRunDoc['lines']>();
  for (const l of run.lines) byVendor.set(l.vendor_id, [...(byVendor.get(l.vendor_id) ?? []), l]);
  try {
    for (const [vendor, lines] of [...byVendor].sort(([a], [b]) => a.localeCompare(b))) {
      await withLock(ctx.db, vendorPaymentLock(ctx.workspace, vendor), async () => {
        for (const l of lines) {
          const current = await bills(ctx.db).findOne({ _id: l.bill_id, workspace: ctx.workspace }).lean();
          if (!current) throw new CuadraError('conflict', `Bill ${l.supplier_number} of this run no longer exists.`);
          const other = current.run_hold && current.run_hold.run_id !== run._id ? await blockingHold(ctx, current, null) : null;
          if (other) throw heldRefusal(current, other);
          await changeBill(ctx, l.bill_id, (bill) => {
            if (bill.run_hold?.run_id === run._id) return null;
            if (bill.run_hold && bill.run_hold.run_id !== current.run_hold?.run_id) throw new CuadraError('conflict', `Bill ${bill.supplier_number} was taken by payment run ${bill.run_hold.run_id} meanwhile.`);
            if ((bill.status !== 'posted' && bill.status !== 'partially_paid') || bill.balance < l.amount) {
              throw new CuadraError('conflict', `Bill ${bill.supplier_number} has ${bill.balance} open (${bill.status}) but the run pays ${l.amount}: it was paid or credited since the run was made. Cancel the run and make a new one.`);
            }
            return { set: { run_hold: { run_id: run._id, payment_id: l.payment_id, amount: l.amount, at: ctx.now } } };
          });
        }
      });
    }
  } catch (err) {
    // Released unless the run got approved meanwhile by another call (whose holds these are too).
    const now = await paymentRuns(ctx.db).findOne({ _id: run._id, workspace: ctx.workspace }, { status: 1 }).lean();
    if (!now || now.status === 'draft' || now.status === 'cancelled') await releaseRunHolds(ctx, run).catch(() => undefined);
    throw err;
  }
}

/** Releases the holds a run has on its bills (cancelled, or an approval refused): each bill takes payments again. */
export async function releaseRunHolds(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, run: Pick<PaymentRunDoc, '_id' | 'lines'>): Promise<void> {
  for (const l of run.lines) {
    await changeBill(ctx, l.bill_id, (bill) => (bill.run_hold?.run_id === run._id ? { set: { run_hold: null } } : null)).catch((err: unknown) => {
      // A bill that no longer exists holds nothing.
      if (!(isCuadraError(err) && err.code === 'not_found')) throw err;
    });
  }
}
