import type { MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf, staleWorkspaces } from '../../books/maintenance.ts';
import { completeStuckImports } from './import.ts';
import { bankImports, bankMarkers, bankTransactions } from './model.ts';

/** The sweep's share of the bank: statement imports a dead process left half written, then rollup intents. */
export const bankMaintenance: MaintenanceHook = async (ctx) => {
  let repaired = 0;
  for (const workspace of await staleWorkspaces(bankMarkers(ctx.db), { kind: 'import' }, ctx.now)) {
    repaired += await completeStuckImports({ db: ctx.db, workspace, now: ctx.now });
  }
  return repaired + await repairRollupsOf(ctx.db, [bankImports(ctx.db), bankTransactions(ctx.db)], ctx.now);
};
