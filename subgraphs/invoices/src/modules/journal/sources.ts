import { defineSource } from '@cuadra/shared';
import { journalEntries, journalMatches, journalView, type JournalEntryDoc } from '../../accounting/journal.ts';

/** records.list `journal_entries`: no kind and no status (specification §2.5); search the memo. */
export const journalEntriesSource = defineSource<JournalEntryDoc>({
  model: journalEntries,
  search: journalMatches,
  row: journalView,
});
