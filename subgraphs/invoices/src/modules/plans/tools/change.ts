import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { assertNotAfterToday, documentToday } from '../../../lib/document-dates.ts';
import { previousPeriod, recurringInvoices } from '../../invoices/recurring.ts';
import { findPlan, SUBSCRIPTION_VIEW_SCHEMA, subscriptions, subscriptionView } from '../model.ts';
import { changeableSubscription, changeInvoiceId, completeChange, prorationOf } from '../ops.ts';

/** Moves a subscription to another plan, prorated daily (ops.ts prorationOf states the rule). */
export const change = defineTool({
  name: 'plans.change',
  description: 'Move a subscription to another plan of the same currency and interval on a date (default today). Upgrade (dearer plan): effective that day; one invoice charges the new plan for the remaining days of the period billed, less a credit for the unused days of the old plan (daily proration: price × remaining days / days in the period, each rounded to the cent). Downgrade: effective from the next period, nothing charged or refunded now. Later periods are billed at the new plan.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['subscription_id', 'plan_id'],
    properties: {
      subscription_id: { type: 'string', pattern: '^sub_[A-Za-z0-9_-]{1,40}$' },
      plan_id: { type: 'string', pattern: '^pln_[A-Za-z0-9_-]{1,40}$' },
      date: { type: 'string', format: 'date' },
    },
  },
  output: recordOutput('subscription', SUBSCRIPTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    const s = await changeableSubscription(ctx, input.subscription_id);
    const date = input.date ?? documentToday(ctx);
    assertNotAfterToday(ctx, date, '/date');
    if (date < s.start_date) throw new CuadraError('invalid_input', `The subscription starts on ${s.start_date}; it cannot change before.`, { field: '/date' });
    const to = await findPlan(ctx, input.plan_id, '/plan_id');
    const from = await findPlan(ctx, s.plan_id);
    if (to._id === from._id) throw new CuadraError('invalid_input', `The subscription is already on plan ${to._id}.`, { field: '/plan_id' });
    if (to.status !== 'active') throw new CuadraError('invalid_input', `Plan ${to._id} is archived.`, { field: '/plan_id' });
    if (to.currency !== from.currency || to.interval !== from.interval) {
      throw new CuadraError('invalid_input', `Plan ${to._id} bills ${to.currency} per ${to.interval}; the subscription bills ${from.currency} per ${from.interval}. Cancel and subscribe instead.`, { field: '/plan_id' });
    }
    const schedule = await recurringInvoices(ctx.db).findOne({ _id: s.schedule_id, workspace: ctx.workspace }).lean();
    if (!schedule || schedule.status !== 'active') throw new CuadraError('conflict', `The billing schedule of subscription ${s._id} is not active.`);
    if (schedule.issued > 0 && date >= schedule.next_date) {
      throw new CuadraError('conflict', `The period from ${schedule.next_date} is not invoiced yet; run invoices.recurring_run first, then change the plan.`);
    }
    if (schedule.issued > 0 && date < schedule.next_date && date < previousPeriod(schedule.next_date, schedule.interval, schedule.every, schedule.anchor_day)) {
      throw new CuadraError('invalid_input', 'A change is dated within the period being billed.', { field: '/date' });
    }
    const proration = prorationOf(schedule, from, to, date);
    const invoiceId = proration.charge - proration.credit > 0 ? changeInvoiceId(s._id, s.changes.length + 1) : null;
    const pending = { ...proration, invoice_id: invoiceId, to_price: to.price, to_name: to.name, to_tax_rate_ppm: to.tax_rate_ppm };
    const marked = await subscriptions(ctx.db).findOneAndUpdate(
      { _id: s._id, rev: s.rev, pending_change: null, status: 'active' },
      { $set: { pending_change: pending, updated_at: ctx.now }, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!marked) throw new CuadraError('conflict', `Subscription ${s._id} changed meanwhile; nothing was done. Try again.`);
    return { subscription: subscriptionView(await completeChange(ctx, marked), documentToday(ctx)) };
  },
});
