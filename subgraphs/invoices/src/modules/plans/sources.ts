import { defineSource, searchIn } from '@cuadra/shared';
import { DUNNING_STAGES, planMatches, plans, subscriptions, type PlanDoc, type SubscriptionDoc } from './model.ts';

/** records.list `plans`: status active or archived; each plan with its price and subscribers (a counter kept on write). */
export const plansSource = defineSource<PlanDoc>({
  model: plans,
  search: planMatches,
  statuses: ['active', 'archived'],
  row: (p) => ({
    id: p._id, name: p.name, status: p.status, currency: p.currency, price: p.price, interval: p.interval, trial_days: p.trial_days, setup_fee: p.setup_fee, subscribers: p.subscribers,
  }),
});

/**
 * records.list `subscriptions`: status starting, active, cancelling or suspended (dunning); each with
 * its plan, customer and dunning state — the invoice chased, the step reached and its day count
 * from the due date.
 */
export const subscriptionsSource = defineSource<SubscriptionDoc>({
  model: subscriptions,
  search: searchIn<SubscriptionDoc>('search_lc'),
  statuses: ['starting', 'active', 'cancelling', 'suspended'],
  row: (s) => ({
    id: s._id, status: s.status, plan_id: s.plan_id, customer_id: s.customer_id, customer_name: s.customer.name, currency: s.currency, start_date: s.start_date,
    cancel_at: s.cancel_at, dunning_invoice_id: s.dunning?.invoice_id ?? null, dunning_due_date: s.dunning?.due_date ?? null,
    dunning_stage: s.dunning ? (s.dunning.level === 0 ? 'overdue' : DUNNING_STAGES[s.dunning.level]) : null,
  }),
});
