import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { AD_ACCOUNT_VIEW_SCHEMA, AD_PLATFORMS, adAccounts, adAccountView, type AdAccountDoc } from '../model.ts';

/** The mapping of platform campaigns to finance tags, as callers write it. */
export const CAMPAIGN_TAGS_SCHEMA = {
  type: 'array', maxItems: 500,
  description: 'Which finance tags each platform campaign\'s spend is booked with, e.g. [{"campaign": "Navidad 2026", "tags": {"campaign": "navidad-2026"}}] (dimensions and tags of finance: dimensions.create, dimensions.create_tag).',
  items: {
    type: 'object', additionalProperties: false, required: ['campaign', 'tags'],
    properties: {
      campaign: { type: 'string', minLength: 1, maxLength: 300, description: 'The campaign\'s name as the platform exports it (case and surrounding spaces ignored).' },
      tags: { type: 'object', minProperties: 1, maxProperties: 8, propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' }, additionalProperties: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$' } },
    },
  },
} as const;

/** One mapping per campaign: the same name twice is a mistake, refused at the second. */
export function checkCampaignTags(list: readonly { campaign: string }[] | undefined): void {
  const seen = new Set<string>();
  list?.forEach((c, i) => {
    const key = c.campaign.trim().toLowerCase();
    if (seen.has(key)) throw new CuadraError('invalid_input', `The campaign "${c.campaign}" is mapped twice.`, { field: `/campaign_tags/${i}/campaign` });
    seen.add(key);
  });
}

/** Connects an ad account (Meta or Google Ads) whose spend is imported from the platform's CSV export. */
export const connect = defineTool({
  name: 'marketing_ad_accounts.connect',
  description: 'Connect an ad account on Meta or Google Ads. Its spend arrives as the platform\'s CSV export (marketing_ad_accounts.import_spend); campaign_tags maps each platform campaign to finance tags, so the spend booked as expenses shows in profitability by campaign.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'platform', 'currency'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      platform: { enum: AD_PLATFORMS },
      external_id: { type: 'string', minLength: 1, maxLength: 60, pattern: '^[A-Za-z0-9_-]+$', description: 'The account\'s id on the platform (act_… on Meta, 123-456-7890 on Google Ads).' },
      currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'The account\'s billing currency (ISO 4217); every import must be in it.' },
      campaign_tags: CAMPAIGN_TAGS_SCHEMA,
    },
  },
  output: recordOutput('account', AD_ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    checkCampaignTags(input.campaign_tags);
    const name = input.name.trim();
    const doc: AdAccountDoc = {
      _id: newId('mad'), workspace: ctx.workspace, name, name_lc: name.toLowerCase(), platform: input.platform, external_id: input.external_id ?? null,
      currency: input.currency, campaign_tags: (input.campaign_tags ?? []).map((c) => ({ campaign: c.campaign.trim(), tags: { ...c.tags } })), created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(adAccounts(ctx.db), doc);
    return { account: adAccountView(doc) };
  },
});
