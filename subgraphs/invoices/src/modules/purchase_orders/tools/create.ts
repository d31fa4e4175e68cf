import { createPositioned, CuadraError, DATE_SCHEMA, defineTool, insertOrStored, localDate, newId, recordOutput, repeatableId } from '@cuadra/shared';
import { billLines, billTotals, vendorFromCrm } from '../../bills/model.ts';
import { BILL_FIELDS } from '../../bills/tools/create.ts';
import { PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrders, purchaseOrderView, type PurchaseOrderDoc } from '../model.ts';

/** Records a purchase order to a vendor as a draft; amounts computed as a bill's are. */
export const create = defineTool({
  name: 'purchase_orders.create',
  description: 'Record a purchase order to a vendor (a crm party of kind vendor or both) as a draft: lines charged to PUC expense or asset accounts with quantity, unit price in cents, discount and VAT, as a bill\'s lines. Totals are computed.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['vendor_id', 'currency', 'lines'],
    properties: {
      vendor_id: BILL_FIELDS.vendor_id, currency: BILL_FIELDS.currency, order_date: DATE_SCHEMA, expected_date: DATE_SCHEMA,
      notes: BILL_FIELDS.notes, lines: BILL_FIELDS.lines,
    },
  },
  output: recordOutput('purchase_order', PURCHASE_ORDER_VIEW_SCHEMA),
  async handler(input, ctx) {
    const lines = billLines(input.lines);
    const orderDate = input.order_date ?? localDate(ctx.now);
    const totals = billTotals(lines, [], orderDate);
    if (input.expected_date && input.expected_date < orderDate) throw new CuadraError('invalid_input', 'The expected date cannot be before the order date.', { field: '/expected_date' });
    const vendor = await vendorFromCrm(ctx, input.vendor_id);
    const doc: PurchaseOrderDoc = {
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's insert applied late and the rerun's collide.
      _id: repeatableId('po') ?? newId('po'), workspace: ctx.workspace, status: 'draft', vendor_id: input.vendor_id, vendor, currency: input.currency, order_date: orderDate,
      expected_date: input.expected_date ?? null, lines: lines.map((l) => ({ ...l, received_micros: 0 })), subtotal: totals.subtotal, tax_total: totals.tax_total,
      total: totals.total, receipts: [], bill_id: null, conversion: null, notes: input.notes ?? null,
      search_lc: `${vendor.name} ${input.notes ?? ''}`.toLowerCase(), rev: 0, sent_at: null, created_at: ctx.now, updated_at: ctx.now,
    };
    // Stored already by an earlier attempt of this call (its insert applied late): that order is answered.
    const stored = await insertOrStored(() => createPositioned(purchaseOrders(ctx.db), doc), purchaseOrders(ctx.db), doc, ctx.workspace);
    return { purchase_order: purchaseOrderView(stored) };
  },
});
