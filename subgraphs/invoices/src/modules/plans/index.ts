import { defineModule } from '@cuadra/shared';
import { dunSubscriptions } from './dunning.ts';
import { plans, subscriptions } from './model.ts';
import { plansSource, subscriptionsSource } from './sources.ts';
import { cancel } from './tools/cancel.ts';
import { change } from './tools/change.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { getSubscription } from './tools/get_subscription.ts';
import { list } from './tools/list.ts';
import { subscribe } from './tools/subscribe.ts';

/**
 * Subscription plans (issue 38): plans with price, interval, trial and setup fee; parties subscribe,
 * and each period is invoiced by the recurring-invoice schedules (modules/invoices/recurring.ts);
 * plan changes are prorated daily; cancellation takes effect at the period's end. Unpaid invoices
 * are ordinary receivables (the agenda's receivables lane), and the sweep duns them: reminders,
 * suspension, reactivation once paid (dunning.ts).
 */
export const plansModule = defineModule({
  name: 'plans',
  tools: [create, get, list, subscribe, change, cancel, getSubscription],
  models: [plans, subscriptions],
  listed: [{ model: plans }, { model: subscriptions }],
  reads: { sources: { plans: plansSource, subscriptions: subscriptionsSource } },
  maintenance: dunSubscriptions,
});
