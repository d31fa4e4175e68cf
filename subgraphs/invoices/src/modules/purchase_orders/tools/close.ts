import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { changePurchaseOrder, PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrderView } from '../model.ts';

/** Closes an order that will receive nothing more and will not be billed from here. */
export const close = defineTool({
  name: 'purchase_orders.close',
  description: 'Close a sent or partially received purchase order that will receive nothing more and is not billed from here (e.g. the vendor cancelled the rest).',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('purchase_order', PURCHASE_ORDER_VIEW_SCHEMA),
  async handler(input, ctx) {
    const closed = await changePurchaseOrder(ctx, input.id, ['sent', 'partially_received'], () => ({ set: { status: 'closed' } }));
    return { purchase_order: purchaseOrderView(closed) };
  },
});
