import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { BILL_VIEW_SCHEMA, billView } from '../model.ts';
import { postBill, previewBillPost } from '../ops.ts';

/** Posts a draft bill: balanced journal entry, payable opened. Exactly once; a second post is a `conflict`. */
export const post = defineTool({
  name: 'bills.post',
  description: 'Post a draft bill: writes a balanced journal entry (expense or asset accounts and deductible VAT against payables and the withholdings owed to the authority) and opens the payable. A posted bill is never edited; posting twice is refused.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('bill', BILL_VIEW_SCHEMA),
  // Its dry run, and what a held post shows the person deciding: the journal lines and the changes.
  preview: (input, ctx) => previewBillPost(ctx, input.id),
  async handler(input, ctx) {
    return { bill: billView(await postBill(ctx, input.id)) };
  },
});
