import { defineSource } from '@cuadra/shared';
import { planMatches, plans, type PlanDoc } from './model.ts';

/** records.list `plans`: status active or archived; each plan with its price and subscribers (a counter kept on write). */
export const plansSource = defineSource<PlanDoc>({
  model: plans,
  search: planMatches,
  statuses: ['active', 'archived'],
  row: (p) => ({
    id: p._id, name: p.name, status: p.status, currency: p.currency, price: p.price, interval: p.interval, trial_days: p.trial_days, setup_fee: p.setup_fee, subscribers: p.subscribers,
  }),
});
