import { defineTool, recordOutput } from '@cuadra/shared';
import { PERIOD_VIEW_SCHEMA, periodView, reopenPeriod } from '../ops.ts';
import { MONTH_INPUT } from './close.ts';

/** Reopens a closed accounting month. */
export const reopen = defineTool({
  name: 'periods.reopen',
  description: 'Reopen a closed accounting month (YYYY-MM) so postings dated in it are accepted again. Reopening December reverses the year-end closing entry; closing it again computes the year\'s result anew.',
  risk: 'write',
  input: MONTH_INPUT,
  output: recordOutput('period', PERIOD_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { period: periodView(await reopenPeriod(ctx, input.month)) };
  },
});
