import { salesDocumentGetTool } from '../../quotes/sales-ops.ts';

/** Reads one sales order. */
export const get = salesDocumentGetTool('sales_order');
