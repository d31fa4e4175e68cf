import type { MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf, staleWorkspaces } from '../../books/maintenance.ts';
import { pendingChanges } from '../../books/rollup-store.ts';
import { completeStuckPayments } from '../../lib/payment-ops.ts';
import { payments } from './model.ts';

/** The sweep's share of payments: payments a dead process left pending are completed, then their rollup intents finished. */
export const paymentsMaintenance: MaintenanceHook = async (ctx) => {
  let repaired = 0;
  for (const workspace of await staleWorkspaces(pendingChanges(ctx.db), { kind: 'payment' }, ctx.now)) {
    repaired += await completeStuckPayments({ db: ctx.db, workspace, now: ctx.now });
  }
  return repaired + await repairRollupsOf(ctx.db, [payments(ctx.db)], ctx.now);
};
