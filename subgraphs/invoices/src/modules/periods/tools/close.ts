import { defineTool, recordOutput } from '@cuadra/shared';
import { closePeriod, PERIOD_VIEW_SCHEMA, periodView } from '../ops.ts';

/** A month, `YYYY-MM`. */
export const MONTH_INPUT = {
  type: 'object', additionalProperties: false, required: ['month'],
  properties: { month: { type: 'string', pattern: '^(19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$', description: 'The month, YYYY-MM.' } },
} as const;

/** Closes an accounting month: nothing posts into it any more. */
export const close = defineTool({
  name: 'periods.close',
  description: 'Close an accounting month (YYYY-MM): from then on nothing is posted dated in it — invoices, credit notes, payments, bills, bill payments and manual journal entries are refused (conflict) until it is reopened. Closing December also closes the year: a closing entry dated 31 December moves the year\'s result (income − costs − expenses) to equity, 3605 Utilidad del ejercicio or 3610 Pérdida del ejercicio.',
  risk: 'write',
  input: MONTH_INPUT,
  output: recordOutput('period', PERIOD_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { period: periodView(await closePeriod(ctx, input.month)) };
  },
});
