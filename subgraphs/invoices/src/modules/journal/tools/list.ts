import { DATE_SCHEMA, defineListTool } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../books/journal.ts';
import { pullPayrollEntries } from '../../../accounting/payroll_pull.ts';

const listed = defineListTool({
  name: 'journal.list',
  description: 'List journal entries (double entry, PUC accounts), newest first, optionally dated between two dates (inclusive); each with its lines and its debit and credit totals. Payroll\'s posted runs and their reversals are included (taken in from payroll first).',
  model: journalEntries,
  view: journalView,
  viewSchema: JOURNAL_VIEW_SCHEMA,
  filters: { from: DATE_SCHEMA, to: DATE_SCHEMA },
  match: ({ from, to }) => (from || to ? (e) => (!from || e.date >= from) && (!to || e.date <= to) : undefined),
});

/** Lists journal entries, newest first, optionally between two dates; payroll's postings are pulled in first. */
export const list: typeof listed = {
  ...listed,
  async handler(input, ctx) {
    await pullPayrollEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
    return listed.handler(input, ctx);
  },
};
