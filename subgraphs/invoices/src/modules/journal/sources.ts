import { defineSource, type SourceReader } from '@cuadra/shared';
import { journalEntries, journalMatches, journalView, type JournalEntryDoc } from '../../books/journal.ts';
import { pullPayrollOnce } from '../../accounting/payroll_pull.ts';

const entries = defineSource<JournalEntryDoc>({
  model: journalEntries,
  search: journalMatches,
  row: journalView,
});

/** records.list `journal_entries`: no kind and no status (specification §2.5); search the memo. Payroll's postings are pulled in first. */
export const journalEntriesSource: SourceReader = async (q, ctx) => {
  await pullPayrollOnce(ctx);
  return entries(q, ctx);
};
