import { defineTool, recordOutput, ID_SCHEMA } from '@cuadra/shared';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocumentView } from '../../../lib/sales-document.ts';
import { transition } from '../sales-ops.ts';

/** Records the customer's acceptance (or refusal) of a sent quote. */
export const accept = defineTool({
  name: 'quotes.accept',
  description: 'Record the customer\'s answer to a sent quote: accept (default) or decline. An accepted quote can be converted into an invoice or a sales order.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, decision: { enum: ['accept', 'decline'] } },
  },
  output: recordOutput('quote', SALES_DOCUMENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const to = input.decision === 'decline' ? 'declined' : 'accepted';
    return { quote: salesDocumentView(await transition(ctx, 'quote', input.id, ['sent'], to)) };
  },
});
