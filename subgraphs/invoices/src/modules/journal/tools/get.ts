import { defineGetTool } from '@cuadra/shared';
import { MANUAL_ENTRY_VIEW_SCHEMA, manualEntries, manualEntryView, type ManualEntryDoc } from '../manual.ts';

/** One manual journal entry (draft, posted or reversed). */
export const get = defineGetTool<ManualEntryDoc>({
  name: 'journal.get',
  description: 'Get one manual journal entry by id (mje_…): its status (draft, posted, reversed), lines, totals and the journal entries it wrote.',
  model: manualEntries, view: manualEntryView, key: 'entry', what: 'journal entry', viewSchema: MANUAL_ENTRY_VIEW_SCHEMA,
});
