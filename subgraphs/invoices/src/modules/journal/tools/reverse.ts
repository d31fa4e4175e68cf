import { DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { MANUAL_ENTRY_VIEW_SCHEMA, manualEntryView, previewManualReverse, reverseManualEntry } from '../manual.ts';

/** Reverses a posted manual entry with a reversing entry. */
export const reverse = defineTool({
  name: 'journal.reverse',
  description: 'Reverse a posted manual journal entry: writes a reversing entry (every debit and credit swapped) dated `date` (default: the original\'s date; it must be in an open period and not before the original). The original stays as it was; its status becomes reversed.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, date: DATE_SCHEMA, memo: { type: 'string', minLength: 1, maxLength: 500 } },
  },
  output: recordOutput('entry', MANUAL_ENTRY_VIEW_SCHEMA),
  // Its dry run, and what a held call shows the person deciding: the journal lines and the changes.
  preview: (input, ctx) => previewManualReverse(ctx, input.id, input.date, input.memo),
  async handler(input, ctx) {
    return { entry: manualEntryView(await reverseManualEntry(ctx, input.id, input.date, input.memo)) };
  },
});
