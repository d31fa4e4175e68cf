import { defineTool } from '@cuadra/shared';
import { salesDocumentView } from '../../models/sales-document.ts';
import { transition } from '../../sales-ops.ts';

/** Records the customer's acceptance (or refusal) of a sent quote. */
export const accept = defineTool<{ id: string; decision?: 'accept' | 'decline' }>({
  name: 'quotes.accept',
  description: 'Record the customer\'s answer to a sent quote: accept (default) or decline. An accepted quote can be converted into an invoice or a sales order.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: { type: 'string', minLength: 1, maxLength: 64 }, decision: { enum: ['accept', 'decline'] } },
  },
  async handler(input, ctx) {
    const to = input.decision === 'decline' ? 'declined' : 'accepted';
    return { quote: salesDocumentView(await transition(ctx, 'quote', input.id, ['sent'], to)) };
  },
});
