import { defineModule } from '@cuadra/shared';
import { inventoryPull } from './inventory_pull_job.ts';
import { payrollPull } from '../../accounting/payroll_pull.ts';
import { journalMaintenance } from './maintenance.ts';
import { journalEntries } from '../../books/journal.ts';
import { manualEntries } from './manual.ts';
import { journalEntriesSource } from './sources.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { post } from './tools/post.ts';
import { reverse } from './tools/reverse.ts';

/** The journal every posting writes (double entry, DOMAIN.md), and the manual entries written in it. */
export const journalModule = defineModule({
  name: 'journal',
  maintenance: journalMaintenance,
  journalSources: ['manual', 'payroll', 'payroll_reversal', 'stock_movement'],
  background: [inventoryPull.job, payrollPull.job],
  tools: [list, get, create, post, reverse],
  models: [journalEntries, manualEntries],
  listed: [{ model: journalEntries }],
  reads: { sources: { journal_entries: journalEntriesSource } },
  readGuards: { 'Query.payrollJournalGrew': 'journal' },
});
