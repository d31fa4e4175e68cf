import type { MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf, staleWorkspaces } from '../../books/maintenance.ts';
import { billCreditMarkers, completeStuckCreditNotes } from './credit.ts';
import { bills } from './model.ts';
import { billPaymentMarkers, billPayments, completeStuckBillPayments } from './payments.ts';

/** The sweep's share of bills: bill payments and credit notes a dead process left half done, then rollup intents. */
export const billsMaintenance: MaintenanceHook = async (ctx) => {
  let repaired = 0;
  for (const workspace of await staleWorkspaces(billPaymentMarkers(ctx.db), {}, ctx.now)) {
    repaired += await completeStuckBillPayments({ db: ctx.db, workspace, now: ctx.now });
  }
  for (const workspace of await staleWorkspaces(billCreditMarkers(ctx.db), {}, ctx.now)) {
    repaired += await completeStuckCreditNotes({ db: ctx.db, workspace, now: ctx.now });
  }
  return repaired + await repairRollupsOf(ctx.db, [bills(ctx.db), billPayments(ctx.db)], ctx.now);
};
