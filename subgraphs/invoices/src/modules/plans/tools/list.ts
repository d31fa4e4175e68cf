import { defineListTool, searchTerm } from '@cuadra/shared';
import { PLAN_VIEW_SCHEMA, planMatches, plans, planView, type PlanDoc } from '../model.ts';

/** Lists plans, newest first. */
export const list = defineListTool({
  name: 'plans.list',
  description: 'List subscription plans, newest first; filter by status or a case-insensitive search over the name.',
  model: plans,
  view: (p: PlanDoc) => planView(p),
  viewSchema: PLAN_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'archived'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || text ? (p: PlanDoc) => (!input.status || p.status === input.status) && (!text || planMatches(p, text)) : undefined;
  },
});
