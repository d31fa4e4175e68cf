import { createPositioned, CuadraError, defineTool, newId, repeatableId, insertOrStored, recordOutput } from '@cuadra/shared';
import { buildLines, buyerFromCrm, lineSchema, withholdingsSchema } from '../../items/document-lines.ts';
import { RECURRING_VIEW_SCHEMA, recurringInvoices, recurringView, type RecurringDoc } from '../recurring.ts';
import { documentToday } from '../../../lib/document-dates.ts';
import { regimeContext, withholdingRatesFor } from '../../../lib/tax-regime.ts';


/** Schedules a recurring invoice. */
export const recurringCreate = defineTool({
  name: 'invoices.recurring_create',
  description: 'Schedule a recurring invoice for a customer: the lines, every N weeks or months from a start date until an optional end date, due N days after issue; each period\'s invoice is made (as a draft, or posted when post is true) by invoices.recurring_run.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['customer_id', 'currency', 'lines', 'interval'],
    properties: {
      customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      lines: { type: 'array', minItems: 1, maxItems: 500, items: lineSchema },
      withholdings: withholdingsSchema,
      notes: { type: 'string', maxLength: 2000 },
      interval: { enum: ['week', 'month'] },
      every: { type: 'integer', minimum: 1, maximum: 24 },
      start_date: { type: 'string', format: 'date' },
      end_date: { type: 'string', format: 'date' },
      due_days: { type: 'integer', minimum: 0, maximum: 365 },
      post: { type: 'boolean' },
    },
  },
  output: recordOutput('recurring', RECURRING_VIEW_SCHEMA),
  async handler(input, ctx) {
    // Priced now only to check the lines (items exist, currencies match); each run prices them again.
    const rc = await regimeContext(ctx.db, ctx.workspace, ctx.principal);
    await buildLines(ctx, input.currency, input.lines, '/lines', rc);
    withholdingRatesFor(rc, input.withholdings);
    const customer = await buyerFromCrm(ctx, input.customer_id);
    const start = input.start_date ?? documentToday(ctx);
    if (input.end_date && input.end_date < start) throw new CuadraError('invalid_input', 'The schedule ends before it starts.', { field: '/end_date' });
    const doc: RecurringDoc = {
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's schedule the store applies late is this one.
      _id: repeatableId('rec') ?? newId('rec'), workspace: ctx.workspace, status: 'active', customer_id: input.customer_id, customer,
      currency: input.currency, lines: input.lines, withholdings: input.withholdings ?? [], notes: input.notes ?? null, interval: input.interval,
      every: input.every ?? 1, due_days: input.due_days ?? 30, post: input.post ?? false, next_date: start, anchor_day: Number(start.slice(8, 10)), end_date: input.end_date ?? null, issued: 0,
      created_at: ctx.now, updated_at: ctx.now,
    };
    // Its id taken: the schedule an earlier attempt of this call wrote, answered as it is.
    return { recurring: recurringView(await insertOrStored(() => createPositioned(recurringInvoices(ctx.db), doc), recurringInvoices(ctx.db), doc, ctx.workspace)) };
  },
});
