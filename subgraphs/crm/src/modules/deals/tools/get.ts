import { defineGetTool } from '@cuadra/shared';
import { DEAL_VIEW_SCHEMA, deals, dealView, type DealDoc } from '../model.ts';

/** One deal with its stage history. */
export const get = defineGetTool<DealDoc>({
  name: 'deals.get',
  description: 'Get one deal by id: party, amount and lines, stage, status, lost reason, custom field values, tags and its stage history (from, to, when, who).',
  model: deals, view: dealView, viewSchema: DEAL_VIEW_SCHEMA, key: 'deal', what: 'deal',
});
