import { defineModule } from '@cuadra/shared';
import { periods } from '../../books/periods.ts';
import { close } from './tools/close.ts';
import { reopen } from './tools/reopen.ts';

/**
 * Accounting periods: closing and reopening a month. The rule they set is kept where every
 * posting goes through, postEntry (books/periods.ts assertPeriodOpen).
 */
export const periodsModule = defineModule({
  name: 'periods',
  journalSources: ['closing'],
  tools: [close, reopen],
  models: [periods],
  readGuards: { 'Query.closedPeriods': 'periods' },
});
