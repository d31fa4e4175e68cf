import { operationsMaintenance, type MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { paymentOperation } from './ops.ts';
import { payments } from './model.ts';

const finishPayments = operationsMaintenance([paymentOperation]);

/** The sweep's share of payments: payments a dead process left pending are completed (the runner), then their rollup intents finished. */
export const paymentsMaintenance: MaintenanceHook = async (ctx) => {
  return (await finishPayments(ctx)) + await repairRollupsOf(ctx.db, [payments(ctx.db)], ctx.now);
};
