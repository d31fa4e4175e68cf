import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { postDocument, previewPost } from '../ops.ts';
import { INVOICE_VIEW_SCHEMA, invoiceView } from '../model.ts';

/** Posts a draft: number, CUFE, balanced journal entry. Exactly once; a second post is a `conflict`. */
export const post = defineTool({
  name: 'invoices.post',
  description: 'Post a draft invoice (or finish an interrupted credit note): assigns the next consecutive number of the DIAN numbering range, computes the CUFE and writes a balanced journal entry (receivables, withholdings, revenue, VAT). A posted invoice is never edited; posting twice is refused.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('invoice', INVOICE_VIEW_SCHEMA),
  // Its dry run, and what a held post shows the person deciding: the journal lines and the changes.
  preview: (input, ctx) => previewPost(ctx, input.id),
  async handler(input, ctx) {
    return { invoice: invoiceView(await postDocument(ctx, input.id)) };
  },
});
