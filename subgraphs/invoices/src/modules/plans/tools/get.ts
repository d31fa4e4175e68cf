import { defineGetTool } from '@cuadra/shared';
import { PLAN_VIEW_SCHEMA, plans, planView, type PlanDoc } from '../model.ts';

/** Reads one plan. */
export const get = defineGetTool<PlanDoc>({
  name: 'plans.get',
  description: 'Get one subscription plan by id: price, interval, trial, setup fee and how many subscriptions it has.',
  model: plans, view: planView, key: 'plan', what: 'plan', viewSchema: PLAN_VIEW_SCHEMA,
});
