import { defineModule } from '@cuadra/shared';
import { journalEntries } from '../../accounting/journal.ts';
import { journalEntriesSource } from './sources.ts';
import { list } from './tools/list.ts';

/** The journal every posting writes (double entry, DOMAIN.md). */
export const journalModule = defineModule({
  name: 'journal',
  tools: [list],
  models: [journalEntries],
  listed: [{ model: journalEntries }],
  reads: { sources: { journal_entries: journalEntriesSource } },
});
