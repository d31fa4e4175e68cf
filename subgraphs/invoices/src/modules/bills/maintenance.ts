import { operationsMaintenance, type MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { creditNoteOperation } from './credit.ts';
import { billPostOperation } from './ops.ts';
import { bills } from './model.ts';
import { billPaymentOperation, billPayments } from './payments.ts';

const finishBills = operationsMaintenance([billPostOperation, billPaymentOperation, creditNoteOperation]);

/** The sweep's share of bills: bill posts, bill payments and credit notes a dead process left half done (the runner), then rollup intents. */
export const billsMaintenance: MaintenanceHook = async (ctx) => {
  return (await finishBills(ctx)) + await repairRollupsOf(ctx.db, [bills(ctx.db), billPayments(ctx.db)], ctx.now);
};
