import { addPositions, DATE_TIME_SCHEMA, modelOn, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** The ad platforms whose spend exports are read. */
export const AD_PLATFORMS = ['meta', 'google_ads'] as const;
export type AdPlatform = (typeof AD_PLATFORMS)[number];

/** Which finance tag a platform campaign's spend is booked with: `{dimension key: tag key}` per campaign name. */
export interface CampaignTag { campaign: string; tags: Record<string, string> }

/** An ad account of a workspace on Meta or Google Ads; its spend arrives as the platform's CSV export. */
export interface AdAccountDoc {
  _id: string;
  workspace: string;
  name: string;
  name_lc: string;
  platform: AdPlatform;
  /** The account's id on the platform (e.g. act_123… or 123-456-7890), shown to tell accounts apart. */
  external_id: string | null;
  /** ISO 4217: every imported amount must be in it (the export names its currency). */
  currency: string;
  /** The mapping of platform campaigns to finance tags (profitability by campaign). */
  campaign_tags: CampaignTag[];
  created_at: Date;
  updated_at: Date;
}

const accountSchema = new Schema<AdAccountDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, name: String, name_lc: String, platform: String,
  external_id: { type: String, default: null }, currency: String, campaign_tags: { type: Schema.Types.Mixed, default: [] }, created_at: Date, updated_at: Date,
}, { versionKey: false });
addPositions(accountSchema);

/** The marketing_ad_accounts collection. */
export function adAccounts(db: Connection): Model<AdAccountDoc> {
  return modelOn<AdAccountDoc>(db, 'AdAccount', accountSchema, 'marketing_ad_accounts');
}

/**
 * What an account spent on one campaign on one day, in minor units of the account's currency.
 * `_id` = `<account>.<day>.<campaign digest>`: importing the same export again (or an overlapping
 * one) replaces the day's figure instead of adding it twice.
 */
export interface AdSpendDoc {
  _id: string;
  workspace: string;
  account_id: string;
  campaign: string;
  day: string;
  amount: number;
  currency: string;
  impressions: number | null;
  clicks: number | null;
  import_id: string;
  updated_at: Date;
}

const spendSchema = new Schema<AdSpendDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, account_id: String, campaign: String, day: String,
  amount: Number, currency: String, impressions: { type: Number, default: null }, clicks: { type: Number, default: null }, import_id: String, updated_at: Date,
}, { versionKey: false });
spendSchema.index({ workspace: 1, account_id: 1, day: 1 });

/** The marketing_ad_spend collection. */
export function adSpend(db: Connection): Model<AdSpendDoc> {
  return modelOn<AdSpendDoc>(db, 'AdSpend', spendSchema, 'marketing_ad_spend');
}

const TAGS_SCHEMA = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** JSON Schema of {@link adAccountView}. */
export const AD_ACCOUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'name', 'platform', 'external_id', 'currency', 'campaign_tags', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, name: TEXT, platform: { enum: AD_PLATFORMS }, external_id: { type: ['string', 'null'] }, currency: TEXT,
    campaign_tags: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['campaign', 'tags'], properties: { campaign: TEXT, tags: TAGS_SCHEMA } } },
    created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of an ad account. */
export function adAccountView(a: AdAccountDoc) {
  return { id: a._id, name: a.name, platform: a.platform, external_id: a.external_id, currency: a.currency, campaign_tags: a.campaign_tags, created_at: a.created_at.toISOString(), updated_at: a.updated_at.toISOString() };
}

/** The finance tags of a platform campaign (matched without regard to case or surrounding spaces), or none. */
export function tagsOf(account: Pick<AdAccountDoc, 'campaign_tags'>, campaign: string): Record<string, string> {
  const key = campaign.trim().toLowerCase();
  return account.campaign_tags.find((c) => c.campaign.trim().toLowerCase() === key)?.tags ?? {};
}
