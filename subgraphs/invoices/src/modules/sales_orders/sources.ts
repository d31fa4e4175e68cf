import { defineSource } from '@cuadra/shared';
import { SALES_ORDER_STATUSES, salesDocumentMatches, salesDocuments, salesRow, salesSeries, type SalesDocument } from '../../lib/sales-document.ts';

/** records.list `sales_orders`: status open or invoiced, search over customer name and notes (as sales_orders.list). */
export const salesOrdersSource = defineSource<SalesDocument>({
  model: salesDocuments,
  series: salesSeries('sales_order'),
  search: salesDocumentMatches,
  statuses: SALES_ORDER_STATUSES,
  row: salesRow,
});
