import { defineSource, type SourceReader } from '@cuadra/shared';
import { journalEntries, journalMatches, journalView, type JournalEntryDoc } from '../../books/journal.ts';
import { payrollPull } from '../../accounting/payroll_pull.ts';

const entries = defineSource<JournalEntryDoc>({
  model: journalEntries,
  search: journalMatches,
  row: journalView,
});

/** records.list `journal_entries`: no kind and no status (specification §2.5); search the memo. Wakes the workspace's payroll pull (accounting/payroll_pull.ts). */
export const journalEntriesSource: SourceReader = (q, ctx) => {
  payrollPull.wake(ctx.workspace);
  return entries(q, ctx);
};
