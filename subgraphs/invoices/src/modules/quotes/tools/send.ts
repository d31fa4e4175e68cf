import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentView } from '../../../lib/sales-document.ts';
import { transition } from '../sales-ops.ts';

/**
 * Marks a draft quote as sent to the customer. Risk `write`: this records the sending; the quote
 * is delivered by the person (or, later, through an e-mail tool whose own risk is `external`).
 */
export const send = defineTool({
  name: 'quotes.send',
  description: 'Mark a draft quote as sent to the customer (it can then be accepted or declined). Refused unless the quote is a draft.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('quote', SALES_DOCUMENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { quote: salesDocumentView(await transition(ctx, 'quote', input.id, ['draft'], 'sent')) };
  },
});
