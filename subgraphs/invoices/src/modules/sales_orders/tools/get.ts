import { salesDocumentGetTool } from '../../../lib/sales-ops.ts';

/** Reads one sales order. */
export const get = salesDocumentGetTool('sales_order');
