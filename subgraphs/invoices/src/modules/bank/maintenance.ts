import { operationsMaintenance, type MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { importOperation } from './import.ts';
import { bankImports, bankTransactions } from './model.ts';

const finishImports = operationsMaintenance([importOperation]);

/** The sweep's share of the bank: statement imports a dead process left half written (the runner), then rollup intents. */
export const bankMaintenance: MaintenanceHook = async (ctx) => {
  return (await finishImports(ctx)) + await repairRollupsOf(ctx.db, [bankImports(ctx.db), bankTransactions(ctx.db)], ctx.now);
};
