import { defineListTool, ID_SCHEMA } from '@cuadra/shared';
import { ACTIVITY_KINDS, ACTIVITY_VIEW_SCHEMA, activities, activityView, type ActivityDoc } from '../model.ts';

/** Activities newest first, of a deal or a party, by kind or status. */
export const list = defineListTool({
  name: 'activities.list',
  description: 'List activities newest first; filter by deal, party, kind or status (open, done).',
  model: activities, view: activityView, viewSchema: ACTIVITY_VIEW_SCHEMA,
  filters: { deal_id: ID_SCHEMA, party_id: ID_SCHEMA, kind: { enum: [...ACTIVITY_KINDS] }, status: { enum: ['open', 'done'] } },
  match: ({ deal_id, party_id, kind, status }) => (!deal_id && !party_id && !kind && !status ? undefined
    : (a: ActivityDoc) => (!deal_id || a.deal_id === deal_id) && (!party_id || a.party_id === party_id) && (!kind || a.kind === kind) && (!status || a.status === status)),
});
