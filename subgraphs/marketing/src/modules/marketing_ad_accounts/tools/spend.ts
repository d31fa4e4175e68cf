import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { spendByCampaign } from '../spend.ts';

const TAGS = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** An ad account's spend by campaign and day over a window. */
export const spend = defineTool({
  name: 'marketing_ad_accounts.spend',
  description: 'An ad account\'s imported spend by campaign and day between from and to (inclusive, at most 367 days), in minor units of its currency, with the finance tags each campaign is booked with.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['account_id', 'from', 'to'], properties: { account_id: ID_SCHEMA, from: DATE_SCHEMA, to: DATE_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['account', 'campaigns', 'total'],
    properties: {
      account: { type: 'object', additionalProperties: false, required: ['id', 'name', 'platform', 'currency'], properties: { id: { type: 'string' }, name: { type: 'string' }, platform: { type: 'string' }, currency: { type: 'string' } } },
      campaigns: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['campaign', 'tags', 'total', 'days'],
          properties: {
            campaign: { type: 'string' }, tags: TAGS, total: { type: 'integer' },
            days: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['day', 'amount', 'impressions', 'clicks'], properties: { day: { type: 'string' }, amount: { type: 'integer' }, impressions: { type: ['integer', 'null'] }, clicks: { type: ['integer', 'null'] } } } },
          },
        },
      },
      total: { type: 'integer' },
    },
  },
  async handler(input, ctx) {
    const out = await spendByCampaign(ctx.db, ctx.workspace, input.account_id, input.from, input.to);
    if (!out) throw new CuadraError('not_found', `No ad account ${input.account_id} exists in this workspace.`);
    return out;
  },
});
