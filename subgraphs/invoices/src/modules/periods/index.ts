import { defineModule } from '@cuadra/shared';
import { periods } from '../../accounting/periods.ts';
import { close } from './tools/close.ts';
import { reopen } from './tools/reopen.ts';

/**
 * Accounting periods: closing and reopening a month. The rule they set is kept where every
 * posting goes through, writeJournalEntry (accounting/periods.ts assertPeriodOpen).
 */
export const periodsModule = defineModule({
  name: 'periods',
  tools: [close, reopen],
  models: [periods],
});
