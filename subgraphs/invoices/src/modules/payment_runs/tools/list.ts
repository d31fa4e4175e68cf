import { defineListTool, searchTerm } from '@cuadra/shared';
import { PAYMENT_RUN_STATUSES, PAYMENT_RUN_VIEW_SCHEMA, paymentRuns, paymentRunView, runMatches, type PaymentRunDoc } from '../model.ts';

/** Lists payment runs, newest first, one bounded page at a time. */
export const list = defineListTool({
  name: 'payment_runs.list',
  description: 'List payment runs, newest first; filter by status or a case-insensitive search over the run id and vendor names.',
  model: paymentRuns,
  view: (r: PaymentRunDoc) => paymentRunView(r),
  viewSchema: PAYMENT_RUN_VIEW_SCHEMA,
  filters: { status: { enum: PAYMENT_RUN_STATUSES }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || text ? (r: PaymentRunDoc) => (!input.status || r.status === input.status) && (!text || runMatches(r, text)) : undefined;
  },
});
