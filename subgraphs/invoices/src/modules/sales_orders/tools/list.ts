import { salesDocumentListTool } from '../../../lib/sales-ops.ts';

/** Lists sales orders, newest first. */
export const list = salesDocumentListTool('sales_order', ['open', 'invoiced']);
