import type { MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { invoices } from './model.ts';

/** The sweep's share of invoices: rollup intents a dead post or settlement left on an invoice. */
export const invoicesMaintenance: MaintenanceHook = (ctx) => repairRollupsOf(ctx.db, [invoices(ctx.db)], ctx.now);
