import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { workspaceCurrency } from '../../../lib/settings.ts';
import { PLAN_INTERVALS, PLAN_VIEW_SCHEMA, plans, planView, type PlanDoc } from '../model.ts';

/** Creates a subscription plan. */
export const create = defineTool({
  name: 'plans.create',
  description: 'Create a subscription plan: name, price per interval (week, month or year) in cents before VAT, VAT rate, free trial days, a one-off setup fee and the days to pay. Parties subscribe with plans.subscribe; each period is invoiced in advance by the recurring invoices.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'price', 'interval'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      price: { type: 'integer', minimum: 1, maximum: 1e15 },
      tax_rate_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'VAT in parts per million (default 190000, 19 %).' },
      interval: { enum: PLAN_INTERVALS },
      trial_days: { type: 'integer', minimum: 0, maximum: 365 },
      setup_fee: { type: 'integer', minimum: 0, maximum: 1e15 },
      due_days: { type: 'integer', minimum: 0, maximum: 365, description: 'Days from issue to due date (default 15).' },
      dunning: {
        type: 'object', additionalProperties: false, required: ['reminder_days', 'second_reminder_days', 'suspend_days'],
        description: 'How an unpaid invoice of a subscriber is chased, in days after its due date: a reminder e-mail, a second one, then the subscription suspended (no new invoices) until it is paid. Default 3, 10 and 21 days; each step later than the one before.',
        properties: { reminder_days: { type: 'integer', minimum: 1, maximum: 365 }, second_reminder_days: { type: 'integer', minimum: 1, maximum: 365 }, suspend_days: { type: 'integer', minimum: 1, maximum: 365 } },
      },
    },
  },
  output: recordOutput('plan', PLAN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const d = input.dunning;
    if (d && d.second_reminder_days <= d.reminder_days) throw new CuadraError('invalid_input', 'The second reminder comes after the first.', { field: '/dunning/second_reminder_days' });
    if (d && d.suspend_days <= d.second_reminder_days) throw new CuadraError('invalid_input', 'The suspension comes after the second reminder.', { field: '/dunning/suspend_days' });
    const doc: PlanDoc = {
      _id: newId('pln'), workspace: ctx.workspace, name: input.name, status: 'active', currency: await workspaceCurrency(ctx.db, ctx.workspace), price: input.price,
      tax_rate_ppm: input.tax_rate_ppm ?? 190000, interval: input.interval, trial_days: input.trial_days ?? 0, setup_fee: input.setup_fee ?? 0, due_days: input.due_days ?? 15,
      subscribers: 0, ...(d ? { dunning: { reminder_days: d.reminder_days, second_reminder_days: d.second_reminder_days, suspend_days: d.suspend_days } } : {}), search_lc: input.name.toLowerCase(), created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(plans(ctx.db), doc);
    return { plan: planView(doc) };
  },
});
