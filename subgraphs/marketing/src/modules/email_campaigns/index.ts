import { defineModule, defineSource, searchIn } from '@cuadra/shared';
import { emailCampaigns, sendingCampaigns, type CampaignDoc } from './model.ts';
import { cancel } from './tools/cancel.ts';
import { create } from './tools/create.ts';
import { get, list } from './tools/list.ts';
import { schedule } from './tools/schedule.ts';
import { send } from './tools/send.ts';

/** Campaigns: an audience of consenting crm parties, scheduled within Ley 2300 windows, sent through a crash-safe queue. */
export const emailCampaignsModule = defineModule({
  name: 'email_campaigns',
  tools: [create, schedule, send, cancel, list, get],
  models: [emailCampaigns, sendingCampaigns],
  listed: [{ model: emailCampaigns }],
  readGuards: { 'Query.emailCampaign': 'email_campaigns', EmailCampaign: 'email_campaigns' },
  reads: {
    sources: {
      email_campaigns: defineSource<CampaignDoc>({
        model: emailCampaigns,
        search: searchIn<CampaignDoc>('name_lc'),
        statuses: ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'],
        row: (c) => ({ id: c._id, name: c.name, status: c.status, send_at: c.send_at?.toISOString() ?? null, rows_total: c.rows_total, sent: (c.counts?.sent ?? 0) + (c.counts?.delivered ?? 0) }),
      }),
    },
  },
});
