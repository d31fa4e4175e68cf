import { defineModule, defineSource, searchIn } from '@cuadra/shared';
import { adAccounts, adSpend, type AdAccountDoc } from './model.ts';
import { connect } from './tools/connect.ts';
import { importSpend } from './tools/import_spend.ts';
import { list } from './tools/list.ts';
import { spend } from './tools/spend.ts';
import { update } from './tools/update.ts';

/** Ad accounts on Meta and Google Ads: spend imported from their CSV exports, by campaign and day, mapped to finance tags. */
export const marketingAdAccountsModule = defineModule({
  name: 'marketing_ad_accounts',
  tools: [connect, update, list, importSpend, spend],
  models: [adAccounts, adSpend],
  listed: [{ model: adAccounts }],
  // finance reads an account's spend to book it (bills.create_from_ad_spend): the credential must reach this module's reads.
  readGuards: { 'Query.adSpend': 'marketing_ad_accounts' },
  reads: {
    sources: {
      marketing_ad_accounts: defineSource<AdAccountDoc>({
        model: adAccounts,
        search: searchIn<AdAccountDoc>('name_lc'),
        row: (a) => ({ id: a._id, name: a.name, platform: a.platform, currency: a.currency, campaigns_mapped: a.campaign_tags.length, updated_at: a.updated_at.toISOString() }),
      }),
    },
  },
});
