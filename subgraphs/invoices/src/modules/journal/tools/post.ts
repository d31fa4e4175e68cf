import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { MANUAL_ENTRY_VIEW_SCHEMA, manualEntryView, postManualEntry, previewManualPost } from '../manual.ts';

/** Posts a draft manual entry to the journal. */
export const post = defineTool({
  name: 'journal.post',
  description: 'Post a draft manual journal entry: it enters the journal (and the statements) on its date. Refused when its period is closed or an account was archived since. A posted entry is never edited: correct it with journal.reverse.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('entry', MANUAL_ENTRY_VIEW_SCHEMA),
  // Its dry run, and what a held call shows the person deciding: the journal lines and the changes.
  preview: (input, ctx) => previewManualPost(ctx, input.id),
  async handler(input, ctx) {
    return { entry: manualEntryView(await postManualEntry(ctx, input.id)) };
  },
});
