import { DATE_SCHEMA, defineListTool } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../accounting/journal.ts';

/** Lists journal entries, newest first, optionally between two dates. */
export const list = defineListTool({
  name: 'journal.list',
  description: 'List journal entries (double entry, PUC accounts), newest first, optionally dated between two dates (inclusive); each with its lines and its debit and credit totals.',
  model: journalEntries,
  view: journalView,
  viewSchema: JOURNAL_VIEW_SCHEMA,
  filters: { from: DATE_SCHEMA, to: DATE_SCHEMA },
  match: ({ from, to }) => (from || to ? (e) => (!from || e.date >= from) && (!to || e.date <= to) : undefined),
});
