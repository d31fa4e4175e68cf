import { operationsMaintenance, type MaintenanceHook } from '@cuadra/shared';
import { repairRollupsOf } from '../../books/maintenance.ts';
import { invoicePostOperation } from './ops.ts';
import { invoices } from './model.ts';
import { noteOverdueInvoices } from './overdue.ts';

const finishPosts = operationsMaintenance([invoicePostOperation]);

/**
 * The sweep's share of invoices: posts a dead process left half done (the runner), rollup intents a
 * dead post or settlement left on an invoice, then the invoices whose due date passed (the
 * `invoice.overdue` event, overdue.ts).
 */
export const invoicesMaintenance: MaintenanceHook = async (ctx) =>
  (await finishPosts(ctx)) + (await repairRollupsOf(ctx.db, [invoices(ctx.db)], ctx.now)) + (await noteOverdueInvoices(ctx));
