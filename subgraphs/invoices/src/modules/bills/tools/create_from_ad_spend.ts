import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { BILL_VIEW_SCHEMA, billView } from '../model.ts';
import { BILL_FIELDS, createDraftBill } from './create.ts';

/** An ad account's spend as the marketing graph answers it (`adSpend`). */
interface AdSpendAnswer { accountName: string; platform: string; currency: string; total: number; campaigns: { campaign: string; tags: Record<string, string>; total: number }[] }

const PLATFORM_NAMES: Record<string, string> = { meta: 'Meta', google_ads: 'Google Ads' };

/**
 * Books an ad account's spend over a window as a vendor's draft bill: one line per campaign, tagged
 * with the finance tags its campaign is mapped to, so profitability by campaign counts it. Marketing
 * owns the spend and finance the books; a service assertion only reads (shared/src/peers.ts), so the
 * bill is made here, by finance's own tool path (the caller's role, policies and the ledger apply as
 * to bills.create), from the spend read through the marketing graph (`adSpend`). Once per vendor
 * invoice number, as every bill: a retry or a second booking of the same invoice is a conflict.
 */
export const createFromAdSpend = defineTool({
  name: 'bills.create_from_ad_spend',
  description: 'Book an ad account\'s spend (Meta, Google Ads: imported with marketing_ad_accounts.import_spend) between from and to as a draft bill of the platform (vendor_id, its invoice or receipt number as supplier_number): one line per campaign at its spend in the window, tagged with the finance tags the campaign is mapped to (profitability by campaign), charged to account (default 5135 Servicios), without VAT unless tax_rate_ppm is given. Post it with bills.post.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['ad_account_id', 'from', 'to', 'vendor_id', 'supplier_number'],
    properties: {
      ad_account_id: { ...ID_SCHEMA, description: 'The marketing ad account (mad_…).' },
      from: DATE_SCHEMA, to: DATE_SCHEMA,
      vendor_id: BILL_FIELDS.vendor_id,
      supplier_number: BILL_FIELDS.supplier_number,
      account: { enum: ['5135', '5195'], description: 'The PUC expense account charged: 5135 Servicios (default) or 5195 Diversos.' },
      tax_rate_ppm: { enum: [190000, 0], description: 'VAT the platform charged, in ppm: 190000 (19 %) or 0 (default).' },
      issue_date: DATE_SCHEMA,
    },
  },
  output: recordOutput('bill', BILL_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (input.to < input.from) throw new CuadraError('invalid_input', 'The window ends before it starts.', { field: '/to' });
    if (!ctx.graph) throw new CuadraError('unavailable', 'The marketing service is not configured here; nothing was done.', { beforeAnyEffect: true });
    const data = await ctx.graph('marketing', 'query($id: ID!, $from: String!, $to: String!) { adSpend(accountId: $id, from: $from, to: $to) { accountName platform currency total campaigns { campaign tags total } } }', { id: input.ad_account_id, from: input.from, to: input.to })
      .catch((err: unknown) => {
        if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
        throw err;
      });
    const spend = data.adSpend as AdSpendAnswer | null;
    if (!spend) throw new CuadraError('not_found', `No ad account ${input.ad_account_id} exists in this workspace.`);
    const campaigns = spend.campaigns.filter((c) => c.total > 0);
    if (campaigns.length === 0) throw new CuadraError('invalid_input', `The ad account ${spend.accountName} has no spend from ${input.from} to ${input.to}; import it first (marketing_ad_accounts.import_spend).`, { field: '/to' });
    if (campaigns.length > 500) throw new CuadraError('invalid_input', `${campaigns.length} campaigns spent in the window; a bill takes at most 500 lines: book a shorter window.`, { field: '/to' });
    const platform = PLATFORM_NAMES[spend.platform] ?? spend.platform;
    const bill = await createDraftBill(ctx, {
      vendor_id: input.vendor_id, supplier_number: input.supplier_number, currency: spend.currency,
      ...(input.issue_date ? { issue_date: input.issue_date } : {}),
      notes: `Pauta en ${platform} (${spend.accountName}) del ${input.from} al ${input.to}.`,
      lines: campaigns.map((c) => ({
        description: `${platform} · ${c.campaign}`.slice(0, 500), account: input.account ?? '5135', quantity: 1, unit_price: c.total,
        ...(input.tax_rate_ppm ? { tax_rate_ppm: input.tax_rate_ppm } : {}), ...(Object.keys(c.tags).length ? { tags: c.tags } : {}),
      })),
    });
    return { bill: billView(bill) };
  },
});
