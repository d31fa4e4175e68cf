import { DATE_SCHEMA, defineListTool } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../books/journal.ts';
import { payrollPull } from '../../../accounting/payroll_pull.ts';

const listed = defineListTool({
  name: 'journal.list',
  description: 'List journal entries (double entry, PUC accounts), newest first, optionally dated between two dates (inclusive); each with its lines and its debit and credit totals. Payroll\'s posted runs and their reversals are included once taken in from payroll (in the background, within seconds of their posting).',
  model: journalEntries,
  view: journalView,
  viewSchema: JOURNAL_VIEW_SCHEMA,
  filters: { from: DATE_SCHEMA, to: DATE_SCHEMA },
  match: ({ from, to }) => (from || to ? (e) => (!from || e.date >= from) && (!to || e.date <= to) : undefined),
});

/** Lists journal entries, newest first, optionally between two dates; wakes the workspace's payroll pull (accounting/payroll_pull.ts). */
export const list: typeof listed = {
  ...listed,
  async handler(input, ctx) {
    payrollPull.wake(ctx.workspace);
    return listed.handler(input, ctx);
  },
};
