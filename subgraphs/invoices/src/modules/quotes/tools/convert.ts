import { defineTool, ID_SCHEMA } from '@cuadra/shared';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView } from '../../invoices/model.ts';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocuments, salesDocumentView } from '../../../lib/sales-document.ts';
import { convert as convertDocument } from '../sales-ops.ts';

/** Converts an accepted quote into a draft invoice or an open sales order, once. */
export const convert = defineTool({
  name: 'quotes.convert',
  description: 'Convert an accepted quote into a draft invoice (default) or an open sales order, with the same customer, lines and withholdings. A quote converts once.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, to: { enum: ['invoice', 'sales_order'] } },
  },
  output: {
    // The quote (now converted) and what it became: a draft invoice or an open sales order.
    type: 'object', additionalProperties: false, required: ['quote'],
    properties: { quote: SALES_DOCUMENT_VIEW_SCHEMA, invoice: INVOICE_VIEW_SCHEMA, sales_order: SALES_DOCUMENT_VIEW_SCHEMA },
    oneOf: [
      { required: ['invoice'], properties: { invoice: INVOICE_VIEW_SCHEMA } },
      { required: ['sales_order'], properties: { sales_order: SALES_DOCUMENT_VIEW_SCHEMA } },
    ],
  },
  async handler(input, ctx) {
    const to = input.to ?? 'invoice';
    const { source, target_id } = await convertDocument(ctx, 'quote', input.id, ['accepted'], to);
    if (to === 'invoice') {
      const inv = await invoices(ctx.db).findById(target_id).lean();
      return { quote: salesDocumentView(source), invoice: invoiceView(inv!) };
    }
    const so = await salesDocuments(ctx.db).findById(target_id).lean();
    return { quote: salesDocumentView(source), sales_order: salesDocumentView(so!) };
  },
});
