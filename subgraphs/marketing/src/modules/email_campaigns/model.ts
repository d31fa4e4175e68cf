import { addPositions, DATE_TIME_SCHEMA, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { AudienceRule } from '../../lib/crm.ts';

/** Why a party of the audience gets no message. */
export const EXCLUSIONS = ['no_consent', 'unsubscribed', 'bounced', 'complained', 'no_email', 'duplicate_address'] as const;
export type Exclusion = (typeof EXCLUSIONS)[number];

/** A campaign: a template sent from an account to an audience of crm parties, within the Ley 2300 windows. */
export interface CampaignDoc {
  _id: string;
  workspace: string;
  name: string;
  name_lc: string;
  template_id: string;
  account_id: string;
  audience: AudienceRule;
  status: 'draft' | 'scheduled' | 'sending' | 'paused' | 'sent' | 'cancelled';
  /** Why a `paused` campaign stopped (its account's connection revoked): email_campaigns.send resumes it. */
  paused_reason?: string | null;
  /** When the owner asked it to go; null: as soon as it is sent. */
  requested_at: Date | null;
  /** The first instant inside a send window at or after `requested_at` (Ley 2300). */
  send_at: Date | null;
  /** Why `send_at` differs from `requested_at` (a Sunday, a holiday, outside hours). */
  moved_reason: string | null;
  /** What is sent, frozen when the send was approved: the template's version and parts. */
  content: { version: number; subject: string; html: string; text: string } | null;
  rows_total: number;
  /** Who it is sent to, frozen when the send ran (row `pos` = index + 1): rows are written from this list, so a rerun writes the same rows. */
  recipients?: { party_id: string; name: string; address: string }[];
  /** Parties left out when the rows were written, and why (at most 1,000 listed; all counted). */
  excluded: { party_id: string; name: string; reason: Exclusion }[];
  excluded_counts: Partial<Record<Exclusion, number>>;
  /** Counts of rows by status, refreshed by the sender. */
  counts: Record<string, number>;
  /** Every row below this position is final: the sender starts here. */
  sender_from: number;
  queued_at: Date | null;
  finished_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const campaignSchema = new Schema<CampaignDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true },
  name: String, name_lc: String, template_id: String, account_id: String, audience: Schema.Types.Mixed, status: String,
  paused_reason: { type: String, default: null }, requested_at: { type: Date, default: null }, send_at: { type: Date, default: null }, moved_reason: { type: String, default: null },
  content: { type: Schema.Types.Mixed, default: null }, recipients: { type: Schema.Types.Mixed, default: undefined }, rows_total: { type: Number, default: 0 },
  excluded: { type: Schema.Types.Mixed, default: [] }, excluded_counts: { type: Schema.Types.Mixed, default: {} }, counts: { type: Schema.Types.Mixed, default: {} },
  sender_from: { type: Number, default: 1 },
  queued_at: { type: Date, default: null }, finished_at: { type: Date, default: null }, cancelled_at: { type: Date, default: null },
  created_at: Date, updated_at: Date,
}, { versionKey: false, minimize: false });
addPositions(campaignSchema);

/** The email_campaigns collection. */
export function emailCampaigns(db: Connection): Model<CampaignDoc> {
  return modelOn<CampaignDoc>(db, 'EmailCampaign', campaignSchema, 'email_campaigns');
}

/**
 * The campaigns the sender works on: one small document per campaign that is sending (`_id` = the
 * campaign's), so the sender finds its work by reading this short collection instead of scanning
 * every campaign for a status. Added before a campaign becomes `sending`, removed after it ends.
 */
export interface SendingDoc { _id: string; workspace: string; since: Date }

const sendingSchema = new Schema<SendingDoc>({ _id: { type: String, required: true }, workspace: String, since: Date }, { versionKey: false });

/** The sender's work list. */
export function sendingCampaigns(db: Connection): Model<SendingDoc> {
  return modelOn<SendingDoc>(db, 'SendingCampaign', sendingSchema, 'email_campaigns_sending');
}

const AUDIENCE_SCHEMA = {
  type: 'object', additionalProperties: false,
  properties: {
    kind: { enum: ['customer', 'vendor', 'both'] },
    tags: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9_:-]{1,40}$' } },
    fields: { type: 'object', maxProperties: 20, propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' }, additionalProperties: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'number' }, { type: 'boolean' }] } },
  },
} as const;

/** The audience rule as tools take it. */
export const AUDIENCE_INPUT = { ...AUDIENCE_SCHEMA, description: 'Parties of crm: of a kind (customer and vendor include both), with every tag given, with the custom field values given. Those without consent, unsubscribed, bounced or complained are left out.' } as const;

/** JSON Schema of {@link campaignView}. */
export const CAMPAIGN_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'template_id', 'account_id', 'audience', 'status', 'requested_at', 'send_at', 'moved_reason', 'rows_total', 'excluded_counts', 'counts', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, name: TEXT, template_id: TEXT, account_id: TEXT, audience: AUDIENCE_SCHEMA,
    status: { enum: ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'] },
    paused_reason: { type: 'string', description: 'Why a paused campaign stopped (its account cannot sign in); send it again to resume.' },
    requested_at: { anyOf: [{ type: 'null' }, DATE_TIME_SCHEMA] },
    send_at: { anyOf: [{ type: 'null' }, DATE_TIME_SCHEMA] },
    moved_reason: NULLABLE_TEXT,
    template_version: { type: 'integer' },
    rows_total: { type: 'integer' },
    excluded_counts: { type: 'object', additionalProperties: { type: 'integer' } },
    counts: { type: 'object', additionalProperties: { type: 'integer' } },
    finished_at: DATE_TIME_SCHEMA,
    created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of a campaign. */
export function campaignView(c: CampaignDoc) {
  return {
    id: c._id, name: c.name, template_id: c.template_id, account_id: c.account_id, audience: c.audience, status: c.status,
    requested_at: c.requested_at?.toISOString() ?? null, send_at: c.send_at?.toISOString() ?? null, moved_reason: c.moved_reason,
    ...(c.content ? { template_version: c.content.version } : {}),
    rows_total: c.rows_total, excluded_counts: c.excluded_counts ?? {}, counts: c.counts ?? {},
    ...(c.finished_at ? { finished_at: c.finished_at.toISOString() } : {}),
    ...(c.status === 'paused' && c.paused_reason ? { paused_reason: c.paused_reason } : {}),
    created_at: c.created_at.toISOString(), updated_at: c.updated_at.toISOString(),
  };
}
