import { defineListTool, ID_SCHEMA, searchTerm } from '@cuadra/shared';
import { PURCHASE_ORDER_STATUSES, PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrderMatches, purchaseOrders, purchaseOrderView, type PurchaseOrderDoc } from '../model.ts';

/** Lists purchase orders, newest first, one bounded page at a time. */
export const list = defineListTool({
  name: 'purchase_orders.list',
  description: 'List purchase orders, newest first; filter by status, vendor or a case-insensitive search over the vendor name and notes.',
  model: purchaseOrders,
  view: (p: PurchaseOrderDoc) => purchaseOrderView(p),
  viewSchema: PURCHASE_ORDER_VIEW_SCHEMA,
  filters: { status: { enum: PURCHASE_ORDER_STATUSES }, vendor_id: ID_SCHEMA, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || input.vendor_id || text
      ? (p: PurchaseOrderDoc) => (!input.status || p.status === input.status) && (!input.vendor_id || p.vendor_id === input.vendor_id) && (!text || purchaseOrderMatches(p, text))
      : undefined;
  },
});
