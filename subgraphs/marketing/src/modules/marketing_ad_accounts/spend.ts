import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { adAccounts, adSpend, tagsOf } from './model.ts';

/** Spend of one campaign over a window: per day, its total, and the finance tags it is booked with. */
export interface CampaignSpend { campaign: string; tags: Record<string, string>; total: number; days: { day: string; amount: number; impressions: number | null; clicks: number | null }[] }

/** The longest window read at once (a year and a day). */
const MAX_DAYS = 367;

/**
 * An ad account's spend by campaign and day between `from` and `to` (inclusive, YYYY-MM-DD), in
 * minor units of its currency — what `marketing_ad_accounts.spend` answers and what finance reads
 * through the graph (`adSpend`) to book it as expenses. Null when the account is not in the workspace.
 */
export async function spendByCampaign(db: Connection, workspace: string, accountId: string, from: string, to: string): Promise<{ account: { id: string; name: string; platform: string; currency: string }; campaigns: CampaignSpend[]; total: number } | null> {
  if (to < from) throw new CuadraError('invalid_input', 'The window ends before it starts.', { field: '/to' });
  if ((Date.parse(to) - Date.parse(from)) / 86_400_000 > MAX_DAYS) throw new CuadraError('invalid_input', `A window spans at most ${MAX_DAYS} days.`, { field: '/to' });
  const account = await adAccounts(db).findOne({ _id: accountId, workspace }).lean();
  if (!account) return null;
  const rows = await adSpend(db).find({ workspace, account_id: accountId, day: { $gte: from, $lte: to } }).sort({ day: 1 }).lean();
  // One campaign whatever the case or spaces an export wrote its name with (as the rows' ids and the
  // tag mapping match it), shown with the name of its latest import.
  const byCampaign = new Map<string, CampaignSpend & { named_at: number }>();
  for (const r of rows) {
    const key = r.campaign.trim().toLowerCase();
    let c = byCampaign.get(key);
    if (!c) byCampaign.set(key, (c = { campaign: r.campaign, tags: tagsOf(account, r.campaign), total: 0, days: [], named_at: r.updated_at.getTime() }));
    if (r.updated_at.getTime() > c.named_at) Object.assign(c, { campaign: r.campaign, named_at: r.updated_at.getTime() });
    c.total += r.amount;
    c.days.push({ day: r.day, amount: r.amount, impressions: r.impressions, clicks: r.clicks });
  }
  const campaigns = [...byCampaign.values()].map(({ named_at: _, ...c }) => c).sort((a, b) => a.campaign.localeCompare(b.campaign));
  return { account: { id: account._id, name: account.name, platform: account.platform, currency: account.currency }, campaigns, total: campaigns.reduce((s, c) => s + c.total, 0) };
}
