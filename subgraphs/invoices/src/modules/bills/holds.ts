import { CuadraError, type ToolContext } from '@cuadra/shared';
import { paymentRuns } from '../payment_runs/model.ts';
import type { BillDoc, BillSettlement } from './model.ts';

/*
 * A bill held by a payment run (issue 31, finding 2). Once a run is approved, its bank file may pay
 * the bill at any moment: from then until the run is confirmed or cancelled, the only settlement
 * the bill takes is the run's own payment. The hold lives on the bill document itself, so the rule
 * is checked in the one conditional write every change of a bill goes through (`changeBill`): a
 * payment (bills.pay, a bank reconciliation, another run), a vendor credit note, anything that
 * lowers what is owed, is refused there — atomically against the approval that sets the hold,
 * whichever comes first. The paths also check it before they write anything, for a clean refusal.
 */

/** Who holds a bill, and the one settlement it waits for. */
export interface BillHold {
  run_id: string;
  /** The bill payment the run will record when confirmed (its id in the bank file, EndToEndId). */
  payment_id: string;
  /** What the run pays of the bill. */
  amount: number;
  at: Date;
}

/** Statuses of a run after which it pays nothing more: a hold of such a run is left over from a process that died. */
const CLOSED_RUN = new Set(['cancelled', 'confirmed']);

/**
 * The hold that stops a settlement `ref` of this bill, or null. The run's own payment passes; a
 * hold whose run is gone, cancelled or confirmed (closed for good, so reading it races with
 * nothing) is left over and passes too.
 */
export async function blockingHold(ctx: Pick<ToolContext, 'db' | 'workspace'>, bill: Pick<BillDoc, 'run_hold'>, ref: string | null): Promise<{ hold: BillHold; status: string } | null> {
  const hold = bill.run_hold;
  if (!hold || (ref !== null && ref === hold.payment_id)) return null;
  const run = await paymentRuns(ctx.db).findOne({ _id: hold.run_id, workspace: ctx.workspace }, { status: 1 }).lean();
  if (!run || CLOSED_RUN.has(run.status)) return null;
  return { hold, status: run.status };
}

/** The refusal of a settlement of a held bill: names the run and what to do. */
export function heldRefusal(bill: Pick<BillDoc, 'supplier_number'>, held: { hold: BillHold; status: string }): CuadraError {
  const why = held.status === 'exported'
    ? 'its bank file was produced and the bank may pay it'
    : held.status === 'draft' ? 'the run\'s approval did not finish; approve or cancel the run' : `the run is ${held.status} and its bank file pays it`;
  return new CuadraError('conflict', `Bill ${bill.supplier_number} is held by payment run ${held.hold.run_id} (${why}): it takes no other payment or credit until that run is confirmed or cancelled.`);
}

/** Refuses (409) a settlement `ref` of a bill held by an open run; nothing is written. */
export async function assertNotHeld(ctx: Pick<ToolContext, 'db' | 'workspace'>, bill: Pick<BillDoc, 'run_hold' | 'supplier_number'>, ref: string | null): Promise<void> {
  const held = await blockingHold(ctx, bill, ref);
  if (held) throw heldRefusal(bill, held);
}

/**
 * Whether a planned change of a bill settles it (lowers what is owed) and with which settlement:
 * a positive settlement pushed, or a lower balance. Reversals (a negative settlement, a higher
 * balance) and changes of a draft do not.
 */
export function settlementOf(doc: Pick<BillDoc, 'balance'>, change: { set?: Partial<BillDoc>; push?: Record<string, unknown> }): { ref: string | null } | null {
  const pushed = change.push?.settlements as BillSettlement | undefined;
  if (pushed && pushed.amount > 0) return { ref: pushed.ref };
  if (change.set?.balance !== undefined && change.set.balance < doc.balance) return { ref: null };
  return null;
}
