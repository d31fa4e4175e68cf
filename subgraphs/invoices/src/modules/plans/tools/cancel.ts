import { addDays, CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { documentToday } from '../../../lib/document-dates.ts';
import { recurringInvoices } from '../../invoices/recurring.ts';
import { plans, SUBSCRIPTION_VIEW_SCHEMA, subscriptions, subscriptionView } from '../model.ts';
import { changeableSubscription } from '../ops.ts';

/**
 * Cancels a subscription at the end of the period already billed: its schedule ends the day
 * before the next billing date (the run then issues nothing more and ends it); a subscription in
 * its trial ends before its first billed day. Nothing is refunded.
 */
export const cancel = defineTool({
  name: 'plans.cancel',
  description: 'Cancel a subscription at the end of the period already invoiced (in a trial: before the first invoice). No further period is invoiced; the current one is not refunded.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['subscription_id'], properties: { subscription_id: { type: 'string', pattern: '^sub_[A-Za-z0-9_-]{1,40}$' } } },
  output: recordOutput('subscription', SUBSCRIPTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    const s = await changeableSubscription(ctx, input.subscription_id);
    for (let attempt = 0; attempt < 5; attempt++) {
      const schedule = await recurringInvoices(ctx.db).findOne({ _id: s.schedule_id, workspace: ctx.workspace }).lean();
      if (!schedule) throw new CuadraError('conflict', `The billing schedule of subscription ${s._id} is missing.`);
      const cancelAt = schedule.next_date;
      // On the date the schedule stood at: a run that issues meanwhile moves it, and this reads again.
      const ended = await recurringInvoices(ctx.db).updateOne({ _id: schedule._id, next_date: cancelAt }, { $set: { end_date: addDays(cancelAt, -1), updated_at: ctx.now } });
      if (ended.modifiedCount === 0 && ended.matchedCount === 0) continue;
      const after = await subscriptions(ctx.db).findOneAndUpdate(
        { _id: s._id, status: 'active', pending_change: null },
        { $set: { status: 'cancelling', cancel_at: cancelAt, updated_at: ctx.now }, $inc: { rev: 1 } },
        { returnDocument: 'after' },
      ).lean();
      if (!after) throw new CuadraError('conflict', `Subscription ${s._id} changed meanwhile; try again.`);
      await plans(ctx.db).updateOne({ _id: s.plan_id }, { $inc: { subscribers: -1 } });
      return { subscription: subscriptionView(after, documentToday(ctx)) };
    }
    throw new CuadraError('conflict', `Subscription ${s._id} is being invoiced right now; try again.`);
  },
});
