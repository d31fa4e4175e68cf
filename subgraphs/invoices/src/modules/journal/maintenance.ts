import type { MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { journalEntries } from '../../books/index.ts';

/** The sweep's share of the journal: ledger rollup intents of entries a dead process wrote but never counted. */
export const journalMaintenance: MaintenanceHook = (ctx) => repairRollupsOf(ctx.db, [journalEntries(ctx.db)], ctx.now);
