import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../books/journal.ts';
import { payrollPull } from '../../../accounting/payroll_pull.ts';
import { MANUAL_ENTRY_VIEW_SCHEMA, manualEntries, manualEntryView } from '../manual.ts';

/**
 * One entry of the journal by the id journal.list and the records source give (`je_…`), in the
 * shape they give it; or one manual entry by its own id (`mje_…`: a draft is in no journal yet),
 * in the shape journal.create/post/reverse answer. A payroll entry not taken in yet is pulled
 * first, as journal.list does, so an id payroll names is found too.
 */
export const get = defineTool({
  name: 'journal.get',
  description: 'Get one journal entry by id: an entry of the journal (je_…, as journal.list gives it: date, memo, source, lines, totals), or a manual entry by its own id (mje_…: status draft, posted or reversed, lines, totals and the journal entries it wrote).',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['entry'],
    properties: { entry: { anyOf: [JOURNAL_VIEW_SCHEMA, MANUAL_ENTRY_VIEW_SCHEMA] } },
  },
  async handler(input, ctx) {
    const manual = await manualEntries(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (manual) return { entry: manualEntryView(manual) };
    const entry = await journalEntries(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    // Perhaps a payroll posting not taken in yet: the background pull takes it in on its next passes.
    if (!entry && input.id.startsWith('je_')) payrollPull.wake(ctx.workspace);
    if (!entry) throw new CuadraError('not_found', `No journal entry ${input.id} exists in this workspace.`);
    return { entry: journalView(entry) };
  },
});
