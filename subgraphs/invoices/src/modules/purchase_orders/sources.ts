import { defineSource } from '@cuadra/shared';
import { PURCHASE_ORDER_STATUSES, purchaseOrderMatches, purchaseOrders, type PurchaseOrderDoc } from './model.ts';

/**
 * records.list `purchase_orders`: status draft, sent, partially_received, received, billed or
 * closed; search over the vendor name and notes — the same test as purchase_orders.list.
 */
export const purchaseOrdersSource = defineSource<PurchaseOrderDoc>({
  model: purchaseOrders,
  search: purchaseOrderMatches,
  statuses: PURCHASE_ORDER_STATUSES,
  row: (p) => ({
    id: p._id, status: p.status, vendor_id: p.vendor_id, vendor_name: p.vendor.name, currency: p.currency, order_date: p.order_date,
    expected_date: p.expected_date, total: p.total, bill_id: p.bill_id,
  }),
});
