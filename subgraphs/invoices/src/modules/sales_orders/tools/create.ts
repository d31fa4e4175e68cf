import { defineTool, recordOutput } from '@cuadra/shared';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentView } from '../../../lib/sales-document.ts';
import { createSalesDocument, salesFields } from '../../quotes/sales-ops.ts';

/** Creates an open sales order. */
export const create = defineTool({
  name: 'sales_orders.create',
  description: 'Create an open sales order for a customer (lines, VAT, withholdings); convert it into an invoice when it is delivered. Orders from accepted quotes are made with quotes.convert.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['customer_id', 'currency', 'lines'], properties: salesFields },
  output: recordOutput('sales_order', SALES_DOCUMENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { sales_order: salesDocumentView(await createSalesDocument(ctx, 'sales_order', input)) };
  },
});
