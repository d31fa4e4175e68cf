import { addDays, createPositioned, CuadraError, defineTool, newId, repeatableId, insertOrStored, recordOutput } from '@cuadra/shared';
import { assertNotAfterToday, documentToday } from '../../../lib/document-dates.ts';
import { buyerFromCrm } from '../../items/document-lines.ts';
import { findPlan, plans, SUBSCRIPTION_VIEW_SCHEMA, subscriptions, subscriptionView, type SubscriptionDoc } from '../model.ts';
import { completeStart, scheduleIdOf, setupInvoiceId } from '../ops.ts';

/**
 * Subscribes a party to a plan: the subscription (status `starting`, the intent), then its
 * recurring schedule from the first day after the trial, and its setup-fee invoice on the start day.
 */
export const subscribe = defineTool({
  name: 'plans.subscribe',
  description: 'Subscribe a customer (crm party) to a plan from a start date (default today, not in the future): the setup fee is invoiced that day; after the trial days, each period is invoiced in advance by a recurring invoice schedule (invoices.recurring_run issues them; posted when post is true). Unpaid invoices follow the receivables lane like any other.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['plan_id', 'customer_id'],
    properties: {
      plan_id: { type: 'string', pattern: '^pln_[A-Za-z0-9_-]{1,40}$' },
      customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
      start_date: { type: 'string', format: 'date' },
      post: { type: 'boolean', description: 'Post each invoice as it is issued (default false: drafts for review).' },
    },
  },
  output: recordOutput('subscription', SUBSCRIPTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    const plan = await findPlan(ctx, input.plan_id, '/plan_id');
    if (plan.status !== 'active') throw new CuadraError('invalid_input', `Plan ${plan._id} is archived; nobody can subscribe to it.`, { field: '/plan_id' });
    const start = input.start_date ?? documentToday(ctx);
    assertNotAfterToday(ctx, start, '/start_date');
    const customer = await buyerFromCrm(ctx, input.customer_id, { field: '/customer_id' });
    // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's subscription the store applies late is this one.
    const id = repeatableId('sub') ?? newId('sub');
    const doc: SubscriptionDoc = {
      _id: id, workspace: ctx.workspace, status: 'starting', plan_id: plan._id, customer_id: input.customer_id, customer, currency: plan.currency, start_date: start,
      billing_start: addDays(start, plan.trial_days), post: input.post ?? false, schedule_id: scheduleIdOf(id), setup_invoice_id: plan.setup_fee > 0 ? setupInvoiceId(id) : null,
      changes: [], pending_change: null, cancel_at: null, rev: 0, search_lc: `${customer.name} ${plan.name}`.toLowerCase(), created_at: ctx.now, updated_at: ctx.now,
    };
    // Its id taken: the subscription an attempt of this call wrote, which died on its insert (so
    // before counting it): counted and started here, not made a second time.
    const started = await insertOrStored(() => createPositioned(subscriptions(ctx.db), doc), subscriptions(ctx.db), doc, ctx.workspace);
    await plans(ctx.db).updateOne({ _id: plan._id }, { $inc: { subscribers: 1 } });
    return { subscription: subscriptionView(await completeStart(ctx, started), documentToday(ctx)) };
  },
});
