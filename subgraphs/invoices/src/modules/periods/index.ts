import { defineModule, operationsMaintenance } from '@cuadra/shared';
import { periods } from '../../books/periods.ts';
import { closeOperation, reopenOperation } from './ops.ts';
import { close } from './tools/close.ts';
import { reopen } from './tools/reopen.ts';

/**
 * Accounting periods: closing and reopening a month. The rule they set is kept where every
 * posting goes through, postEntry (books/periods.ts assertPeriodOpen).
 */
export const periodsModule = defineModule({
  name: 'periods',
  // A close or reopen a dead process left half done (the runner): a month never stays closing.
  maintenance: operationsMaintenance([closeOperation, reopenOperation]),
  journalSources: ['closing'],
  tools: [close, reopen],
  models: [periods],
  readGuards: { 'Query.closedPeriods': 'periods' },
});
