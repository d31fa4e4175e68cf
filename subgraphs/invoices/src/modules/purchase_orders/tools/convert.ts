import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, type ToolContext } from '@cuadra/shared';
import { BILL_VIEW_SCHEMA, bills, billView, type BillDoc } from '../../bills/model.ts';
import { BILL_FIELDS, createDraftBill, type BillCreateInput } from '../../bills/tools/create.ts';
import { changePurchaseOrder, findPurchaseOrder, PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrders, purchaseOrderView, type PurchaseOrderDoc } from '../model.ts';

/** The bill a purchase order converts into: its id is the order's, so one order makes one bill. */
function billIdOf(orderId: string): string {
  return `bil_${orderId}`;
}

/** The bills.create input of an order's conversion: the lines received so far, at the ordered prices. */
function billInput(po: PurchaseOrderDoc, conversion: NonNullable<PurchaseOrderDoc['conversion']>, withholdings: BillCreateInput['withholdings']): BillCreateInput {
  return {
    vendor_id: po.vendor_id, supplier_number: conversion.supplier_number, currency: po.currency,
    ...(conversion.issue_date ? { issue_date: conversion.issue_date } : {}), ...(conversion.due_date ? { due_date: conversion.due_date } : {}),
    notes: `Orden de compra ${po._id}`,
    ...(withholdings ? { withholdings } : {}),
    lines: po.lines.filter((l) => l.received_micros > 0).map((l) => ({
      description: l.description, account: l.account, quantity: l.received_micros / 1_000_000, unit_price: l.unit_price, discount_bps: l.discount_bps,
      // A line's rate was one of the bill's rates when the order was made.
      tax_rate_ppm: l.tax_rate_ppm as 190000 | 50000 | 0,
      ...(l.withholding_concept ? { withholding_concept: l.withholding_concept } : {}),
    })),
  };
}

/**
 * Writes the bill of a conversion through the bills module's create path. A bill already written
 * under the chosen id (a retry) is the answer; a refusal from the bills path (the vendor's invoice
 * number already recorded, crm not answering) puts the order back as it was, so nothing is half-done.
 */
async function writeBill(ctx: ToolContext, po: PurchaseOrderDoc, withholdings: BillCreateInput['withholdings']): Promise<BillDoc> {
  const id = billIdOf(po._id);
  try {
    return await createDraftBill(ctx, billInput(po, po.conversion!, withholdings), id);
  } catch (err) {
    const existing = await bills(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (existing) return existing;
    await purchaseOrders(ctx.db).updateOne(
      { _id: po._id, workspace: ctx.workspace, status: 'billed', bill_id: id },
      { $set: { status: po.conversion!.from, bill_id: null, conversion: null, updated_at: ctx.now }, $inc: { rev: 1 } },
    );
    throw err;
  }
}

/**
 * Converts a (partially) received order into a draft bill, exactly once: the bill's id is chosen
 * and written on the order by one conditional update (→ billed), then the bill is written with that
 * id through bills.create's path. A conversion interrupted in between is finished by the next call.
 */
export const convert = defineTool({
  name: 'purchase_orders.convert',
  description: 'Convert a received or partially received purchase order into a draft bill of what was received so far (quantities received at the ordered prices), under the vendor\'s invoice number. The order becomes billed; an order is billed once.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'supplier_number'],
    properties: { id: ID_SCHEMA, supplier_number: BILL_FIELDS.supplier_number, issue_date: DATE_SCHEMA, due_date: DATE_SCHEMA, withholdings: BILL_FIELDS.withholdings },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['purchase_order', 'bill'],
    properties: { purchase_order: PURCHASE_ORDER_VIEW_SCHEMA, bill: BILL_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    const current = await findPurchaseOrder(ctx, input.id);
    if (current.status === 'billed' && current.bill_id && current.conversion) {
      // Finish an interrupted conversion (its bill missing); a finished one is refused.
      if (await bills(ctx.db).exists({ _id: current.bill_id, workspace: ctx.workspace })) throw new CuadraError('conflict', `Purchase order ${current._id} is already billed (${current.bill_id}).`);
      const bill = await writeBill(ctx, current, input.withholdings);
      return { purchase_order: purchaseOrderView(current), bill: billView(bill) };
    }
    const billed = await changePurchaseOrder(ctx, input.id, ['partially_received', 'received'], (doc) => ({
      set: {
        status: 'billed', bill_id: billIdOf(doc._id),
        conversion: { supplier_number: input.supplier_number, issue_date: input.issue_date ?? null, due_date: input.due_date ?? null, from: doc.status },
      },
    }));
    const bill = await writeBill(ctx, billed, input.withholdings);
    return { purchase_order: purchaseOrderView(billed), bill: billView(bill) };
  },
});
