import { defineListTool } from '@cuadra/shared';
import { RECURRING_STATUSES, RECURRING_VIEW_SCHEMA, recurringInvoices, recurringView } from '../recurring.ts';

/** Lists recurring invoice schedules, newest first, one bounded page at a time (CONTRACT §9). */
export const recurringList = defineListTool({
  name: 'invoices.recurring_list',
  description: 'List recurring invoice schedules, newest first; filter by status.',
  model: recurringInvoices,
  view: recurringView,
  viewSchema: RECURRING_VIEW_SCHEMA,
  filters: { status: { enum: RECURRING_STATUSES } },
  match: ({ status }) => (status ? (r) => r.status === status : undefined),
});
