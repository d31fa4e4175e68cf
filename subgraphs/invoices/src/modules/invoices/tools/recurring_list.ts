import { defineTool } from '@cuadra/shared';
import { RECURRING_VIEW_SCHEMA, recurringInvoices, recurringView } from '../recurring.ts';

/** Lists recurring invoice schedules by their next date. */
export const recurringList = defineTool<{ status?: 'active' | 'ended' | 'cancelled'; limit?: number }>({
  name: 'invoices.recurring_list',
  description: 'List recurring invoice schedules, soonest next date first; filter by status.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: { status: { enum: ['active', 'ended', 'cancelled'] }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
  },
  output: {
    // Not paged: the first `limit` schedules by next date, without total or cursor.
    type: 'object', additionalProperties: false, required: ['rows'],
    properties: { rows: { type: 'array', items: RECURRING_VIEW_SCHEMA } },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.status) filter.status = input.status;
    const rows = await recurringInvoices(ctx.db).find(filter).sort({ next_date: 1, _id: 1 }).limit(input.limit ?? 20).lean();
    return { rows: rows.map(recurringView) };
  },
});
