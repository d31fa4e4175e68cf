import { createHash } from 'node:crypto';
import { CuadraError, defineTool, ID_SCHEMA, newId } from '@cuadra/shared';
import { readSpendCsv } from '../csv.ts';
import { adAccounts, adSpend, type AdSpendDoc } from '../model.ts';

/** The id of one account's spend on one campaign and day: the same for every import that carries it. */
function spendId(accountId: string, day: string, campaign: string): string {
  return `${accountId}.${day}.${createHash('sha256').update(campaign.trim().toLowerCase()).digest('base64url').slice(0, 22)}`;
}

/** Imports a platform's CSV export of spend by campaign and day into the account. */
export const importSpend = defineTool({
  name: 'marketing_ad_accounts.import_spend',
  description: 'Import an ad account\'s spend from the platform\'s CSV export broken down by campaign and day (Meta Ads Manager: "Campaign name", "Day", "Amount spent (COP)"; Google Ads: "Campaign", "Day", "Currency code", "Cost"; Spanish headers too). mapping names other columns and a comma decimal separator. Importing an export again, or one that overlaps, replaces those days\' figures: nothing is counted twice. Amounts must be in the account\'s currency. A file with any bad row is refused whole, naming the row.',
  risk: 'write',
  maxInputBytes: 6_000_000,
  input: {
    type: 'object', additionalProperties: false, required: ['account_id', 'csv'],
    properties: {
      account_id: ID_SCHEMA,
      csv: { type: 'string', minLength: 1, maxLength: 5_000_000 },
      mapping: {
        type: 'object', additionalProperties: false,
        properties: {
          campaign: { type: 'string', minLength: 1, maxLength: 100 }, day: { type: 'string', minLength: 1, maxLength: 100 }, amount: { type: 'string', minLength: 1, maxLength: 100 },
          currency: { type: 'string', minLength: 1, maxLength: 100 }, impressions: { type: 'string', minLength: 1, maxLength: 100 }, clicks: { type: 'string', minLength: 1, maxLength: 100 },
          decimal_separator: { enum: ['.', ','] },
        },
      },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['import_id', 'rows', 'campaigns', 'from', 'to', 'total', 'currency'],
    properties: {
      import_id: { type: 'string' }, rows: { type: 'integer' }, campaigns: { type: 'integer' }, from: { type: 'string' }, to: { type: 'string' },
      total: { type: 'integer', description: 'The imported spend, in minor units of the currency.' }, currency: { type: 'string' },
    },
  },
  async handler(input, ctx) {
    const account = await adAccounts(ctx.db).findOne({ _id: input.account_id, workspace: ctx.workspace }).lean();
    if (!account) throw new CuadraError('not_found', `No ad account ${input.account_id} exists in this workspace.`);
    const { lines } = readSpendCsv(input.csv, account.platform, input.mapping);
    const seen = new Map<string, number>();
    for (const l of lines) {
      if (l.currency && l.currency !== account.currency) throw new CuadraError('invalid_input', `Row ${l.row} is in ${l.currency}; the account ${account.name} is in ${account.currency}.`, { field: '/csv' });
      const id = spendId(account._id, l.day, l.campaign);
      const earlier = seen.get(id);
      if (earlier) throw new CuadraError('invalid_input', `Rows ${earlier} and ${l.row} both give ${l.campaign} on ${l.day}.`, { field: '/csv' });
      seen.set(id, l.row);
    }
    const importId = newId('imp');
    // Every row is an upsert by its id: an interrupted import, repeated, ends where one whole import would.
    const writes = lines.map((l) => {
      const doc: Omit<AdSpendDoc, '_id'> = { workspace: ctx.workspace, account_id: account._id, campaign: l.campaign.trim(), day: l.day, amount: l.amount, currency: account.currency, impressions: l.impressions, clicks: l.clicks, import_id: importId, updated_at: ctx.now };
      return { updateOne: { filter: { _id: spendId(account._id, l.day, l.campaign) }, update: { $set: doc }, upsert: true } };
    });
    for (let i = 0; i < writes.length; i += 1000) await adSpend(ctx.db).bulkWrite(writes.slice(i, i + 1000), { ordered: false });
    const days = lines.map((l) => l.day).sort();
    return {
      import_id: importId, rows: lines.length, campaigns: new Set(lines.map((l) => l.campaign.trim().toLowerCase())).size,
      from: days[0], to: days[days.length - 1], total: lines.reduce((s, l) => s + l.amount, 0), currency: account.currency,
    };
  },
});
