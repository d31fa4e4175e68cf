import { defineTool, ID_INPUT } from '@cuadra/shared';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView } from '../../invoices/model.ts';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentView } from '../../../lib/sales-document.ts';
import { convert as convertDocument } from '../../quotes/sales-ops.ts';

/** Converts an open sales order into a draft invoice, once. */
export const convert = defineTool({
  name: 'sales_orders.convert',
  description: 'Convert an open sales order into a draft invoice with the same customer, lines and withholdings. An order is invoiced once.',
  risk: 'write',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['sales_order', 'invoice'],
    properties: { sales_order: SALES_DOCUMENT_VIEW_SCHEMA, invoice: INVOICE_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    const { source, target_id } = await convertDocument(ctx, 'sales_order', input.id, ['open'], 'invoice');
    const inv = await invoices(ctx.db).findById(target_id).lean();
    return { sales_order: salesDocumentView(source), invoice: invoiceView(inv!) };
  },
});
