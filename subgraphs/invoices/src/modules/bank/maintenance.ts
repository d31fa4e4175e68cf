import { operationsMaintenance, type MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { importOperation } from './import.ts';
import { reconcileOperation, unreconcileOperation } from './reconcile.ts';
import { bankImports, bankTransactions } from './model.ts';

const finishOperations = operationsMaintenance([importOperation, reconcileOperation, unreconcileOperation]);

/** The sweep's share of the bank: statement imports, reconciliations and undos a dead process left half done (the runner), then rollup intents. */
export const bankMaintenance: MaintenanceHook = async (ctx) => {
  return (await finishOperations(ctx)) + await repairRollupsOf(ctx.db, [bankImports(ctx.db), bankTransactions(ctx.db)], ctx.now);
};
