import { SALES_ORDER_STATUSES } from '../../../lib/sales-document.ts';
import { salesDocumentListTool } from '../../quotes/sales-ops.ts';

/** Lists sales orders, newest first. */
export const list = salesDocumentListTool('sales_order', SALES_ORDER_STATUSES);
