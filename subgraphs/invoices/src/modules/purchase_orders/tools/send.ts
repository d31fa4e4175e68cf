import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { changePurchaseOrder, PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrderView } from '../model.ts';

/** Marks a draft order as sent to the vendor; from then on it is received, not edited. */
export const send = defineTool({
  name: 'purchase_orders.send',
  description: 'Mark a draft purchase order as sent to the vendor (it is not e-mailed from here). A sent order takes receipts.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('purchase_order', PURCHASE_ORDER_VIEW_SCHEMA),
  async handler(input, ctx) {
    const sent = await changePurchaseOrder(ctx, input.id, ['draft'], () => ({ set: { status: 'sent', sent_at: ctx.now } }));
    return { purchase_order: purchaseOrderView(sent) };
  },
});
