import { defineGetTool } from '@cuadra/shared';
import { PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrders, purchaseOrderView, type PurchaseOrderDoc } from '../model.ts';

/** Reads one purchase order of the caller's workspace. */
export const get = defineGetTool<PurchaseOrderDoc>({
  name: 'purchase_orders.get',
  description: 'Get one purchase order by id: vendor, lines with quantities ordered, received and outstanding, totals, receipts, status and the bill it became.',
  model: purchaseOrders, view: purchaseOrderView, key: 'purchase_order', what: 'purchase order', viewSchema: PURCHASE_ORDER_VIEW_SCHEMA,
});
