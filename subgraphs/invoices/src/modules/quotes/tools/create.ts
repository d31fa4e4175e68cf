import { defineTool, recordOutput } from '@cuadra/shared';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentView } from '../../../lib/sales-document.ts';
import { createSalesDocument, salesFields } from '../sales-ops.ts';

/** Creates a draft quote. */
export const create = defineTool({
  name: 'quotes.create',
  description: 'Create a draft quote for a customer: lines from the catalog or free text, VAT and withholdings, valid until a date (default 30 days). Send it, record its acceptance, then convert it into an invoice or a sales order.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['customer_id', 'currency', 'lines'], properties: { ...salesFields, valid_until: { type: 'string', format: 'date' } } },
  output: recordOutput('quote', SALES_DOCUMENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { quote: salesDocumentView(await createSalesDocument(ctx, 'quote', input)) };
  },
});
