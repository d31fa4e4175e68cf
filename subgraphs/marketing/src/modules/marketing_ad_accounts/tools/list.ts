import { defineListTool } from '@cuadra/shared';
import { AD_ACCOUNT_VIEW_SCHEMA, AD_PLATFORMS, adAccounts, adAccountView } from '../model.ts';

/** Lists the workspace's ad accounts, newest first. */
export const list = defineListTool({
  name: 'marketing_ad_accounts.list',
  description: 'List the workspace\'s ad accounts (Meta, Google Ads), newest first, with their campaign → finance tag mapping.',
  model: adAccounts,
  view: adAccountView,
  viewSchema: AD_ACCOUNT_VIEW_SCHEMA,
  filters: { platform: { enum: AD_PLATFORMS } },
  match: ({ platform }) => (a) => !platform || a.platform === platform,
});
