import { defineGetTool, defineListTool } from '@cuadra/shared';
import { CAMPAIGN_VIEW_SCHEMA, campaignView, emailCampaigns, type CampaignDoc } from '../model.ts';

/** Lists campaigns, newest first. */
export const list = defineListTool({
  name: 'email_campaigns.list',
  description: 'List the workspace\'s e-mail campaigns, newest first, with their schedule and counts of messages by status; filter by status or search the name.',
  model: emailCampaigns,
  view: campaignView,
  viewSchema: CAMPAIGN_VIEW_SCHEMA,
  filters: { status: { enum: ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => (status || search ? (c) => (!status || c.status === status) && (!search || c.name_lc.includes(search.toLowerCase())) : undefined),
});

/** One campaign. */
export const get = defineGetTool<CampaignDoc>({
  name: 'email_campaigns.get',
  description: 'Get one e-mail campaign: its audience, schedule (and why it was moved), the parties left out by reason, and its messages counted by status.',
  model: emailCampaigns,
  view: campaignView,
  viewSchema: CAMPAIGN_VIEW_SCHEMA,
  key: 'campaign',
  what: 'e-mail campaign',
});
