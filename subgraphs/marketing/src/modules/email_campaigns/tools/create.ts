import { createPositioned, defineTool, ID_SCHEMA, newId, recordOutput } from '@cuadra/shared';
import { campaignTemplate, usableAccount } from '../content.ts';
import { AUDIENCE_INPUT, CAMPAIGN_VIEW_SCHEMA, campaignView, emailCampaigns, type CampaignDoc } from '../model.ts';

/** Creates a draft campaign: a template, an account, an audience of crm parties. */
export const create = defineTool({
  name: 'email_campaigns.create',
  description: 'Create a draft e-mail campaign: a name, the template, the verified account it is sent from, and the audience (crm parties by kind, tags and custom fields; those without consent, unsubscribed, bounced or complained are always left out). Then schedule it (email_campaigns.schedule) and send it (email_campaigns.send, approved by a person).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'template_id', 'account_id'],
    properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, template_id: ID_SCHEMA, account_id: ID_SCHEMA, audience: AUDIENCE_INPUT },
  },
  output: recordOutput('campaign', CAMPAIGN_VIEW_SCHEMA),
  async handler(input, ctx) {
    await campaignTemplate(ctx.db, ctx.workspace, input.template_id);
    await usableAccount(ctx.db, ctx.workspace, input.account_id);
    const doc: CampaignDoc = {
      _id: newId('ecm'), workspace: ctx.workspace, name: input.name.trim(), name_lc: input.name.trim().toLowerCase(), template_id: input.template_id, account_id: input.account_id,
      audience: (input.audience ?? {}) as CampaignDoc['audience'], status: 'draft', requested_at: null, send_at: null, moved_reason: null, content: null, rows_total: 0,
      excluded: [], excluded_counts: {}, counts: {}, sender_from: 1, queued_at: null, finished_at: null, cancelled_at: null, created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(emailCampaigns(ctx.db), doc);
    return { campaign: campaignView(doc) };
  },
});
