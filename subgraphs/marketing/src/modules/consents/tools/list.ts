import { defineListTool, ID_SCHEMA } from '@cuadra/shared';
import { CONSENT_VIEW_SCHEMA, consents, consentView } from '../model.ts';

/** Lists consents, newest first. */
export const list = defineListTool({
  name: 'consents.list',
  description: 'List the workspace\'s marketing consents (granted, pending confirmation, withdrawn), newest first, each with its evidence and history; filter by party or status.',
  model: consents,
  view: consentView,
  viewSchema: CONSENT_VIEW_SCHEMA,
  series: { series: 'marketing_consents' },
  filters: { party_id: ID_SCHEMA, status: { enum: ['granted', 'pending', 'withdrawn'] } },
  match: ({ party_id, status }) => (party_id || status ? (c) => (!party_id || c.party_id === party_id) && (!status || c.status === status) : undefined),
});
