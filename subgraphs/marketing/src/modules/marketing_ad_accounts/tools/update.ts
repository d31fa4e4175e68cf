import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { AD_ACCOUNT_VIEW_SCHEMA, adAccounts, adAccountView } from '../model.ts';
import { CAMPAIGN_TAGS_SCHEMA, checkCampaignTags } from './connect.ts';

/** Renames an ad account or replaces its campaign → finance tag mapping. */
export const update = defineTool({
  name: 'marketing_ad_accounts.update',
  description: 'Rename an ad account or replace its mapping of platform campaigns to finance tags (campaign_tags, the whole list). Spend already booked keeps the tags it was booked with.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: { id: ID_SCHEMA, name: { type: 'string', minLength: 1, maxLength: 200 }, campaign_tags: CAMPAIGN_TAGS_SCHEMA },
  },
  output: recordOutput('account', AD_ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    checkCampaignTags(input.campaign_tags);
    const set: Record<string, unknown> = { updated_at: ctx.now };
    if (input.name !== undefined) Object.assign(set, { name: input.name.trim(), name_lc: input.name.trim().toLowerCase() });
    if (input.campaign_tags !== undefined) set.campaign_tags = input.campaign_tags.map((c) => ({ campaign: c.campaign.trim(), tags: { ...c.tags } }));
    const doc = await adAccounts(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace }, { $set: set }, { new: true }).lean();
    if (!doc) throw new CuadraError('not_found', `No ad account ${input.id} exists in this workspace.`);
    return { account: adAccountView(doc) };
  },
});
