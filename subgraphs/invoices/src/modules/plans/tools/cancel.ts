import { addDays, CuadraError, defineTool, recordOutput, type ToolContext } from '@cuadra/shared';
import { documentToday } from '../../../lib/document-dates.ts';
import { recurringInvoices } from '../../invoices/recurring.ts';
import { plans, SUBSCRIPTION_VIEW_SCHEMA, subscriptions, subscriptionView, type SubscriptionDoc } from '../model.ts';
import { changeableSubscription } from '../ops.ts';

/**
 * Cancels a subscription at the end of the period already billed: its schedule ends the day
 * before the next billing date (the run then issues nothing more and ends it); a subscription in
 * its trial ends before its first billed day. Nothing is refunded.
 *
 * A subscription suspended by dunning can be cancelled too (a customer who owes may still leave):
 * it ends with the last period billed — the one its schedule was suspended at is never billed —,
 * its schedule ends, and what it owes stays owed (the invoice stays in the receivables lane; its
 * dunning stays on record until it is paid, and nothing is resumed then).
 */
export const cancel = defineTool({
  name: 'plans.cancel',
  description: 'Cancel a subscription at the end of the period already invoiced (in a trial: before the first invoice). No further period is invoiced; the current one is not refunded. A subscription suspended for an unpaid invoice can be cancelled too: it ends with the last period invoiced and what it owes stays owed.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['subscription_id'], properties: { subscription_id: { type: 'string', pattern: '^sub_[A-Za-z0-9_-]{1,40}$' } } },
  output: recordOutput('subscription', SUBSCRIPTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    const s = await changeableSubscription(ctx, input.subscription_id, ['suspended']);
    if (s.status === 'suspended') return { subscription: subscriptionView(await cancelSuspended(ctx, s), documentToday(ctx)) };
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

/**
 * Cancels a suspended subscription at the date its schedule stands at (the first period not
 * billed). The subscription is decided first (one conditional update on `rev`, which the dunning
 * sweep's reactivation also takes: one of the two wins), then its schedule ended: a schedule left
 * suspended by a crash between the two issues nothing either, and the sweep resumes only a
 * subscription still `suspended`.
 */
async function cancelSuspended(ctx: ToolContext, s: SubscriptionDoc): Promise<SubscriptionDoc> {
  const schedule = await recurringInvoices(ctx.db).findOne({ _id: s.schedule_id, workspace: ctx.workspace }).lean();
  if (!schedule) throw new CuadraError('conflict', `The billing schedule of subscription ${s._id} is missing.`);
  const cancelAt = schedule.next_date;
  const after = await subscriptions(ctx.db).findOneAndUpdate(
    { _id: s._id, status: 'suspended', rev: s.rev },
    { $set: { status: 'cancelling', cancel_at: cancelAt, ...(s.dunning ? { 'dunning.resume_status': null } : {}), updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!after) throw new CuadraError('conflict', `Subscription ${s._id} changed meanwhile; try again.`);
  await recurringInvoices(ctx.db).updateOne({ _id: schedule._id, status: 'suspended' }, { $set: { status: 'ended', end_date: addDays(cancelAt, -1), updated_at: ctx.now } });
  await plans(ctx.db).updateOne({ _id: s.plan_id }, { $inc: { subscribers: -1 } });
  return after;
}
