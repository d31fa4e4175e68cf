import { DATE_TIME_SCHEMA, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Where a message to one recipient of one campaign stands. */
export const ROW_STATUSES = ['queued', 'sending', 'sent', 'delivered', 'bounced_hard', 'bounced_soft', 'complained', 'unsubscribed', 'replied', 'failed', 'in_doubt', 'cancelled'] as const;
export type RowStatus = (typeof ROW_STATUSES)[number];

/** Statuses the sender is done with (the message left, or never will). */
export const FINAL_ROW_STATUSES: readonly RowStatus[] = ['sent', 'delivered', 'bounced_hard', 'bounced_soft', 'complained', 'unsubscribed', 'replied', 'failed', 'in_doubt', 'cancelled'];

/**
 * One recipient of one campaign. `_id` = `<campaign>.<party>`: written once per recipient whatever
 * retries happen, and the message's `Message-ID` is `<_id@sending domain>`, the same on every attempt,
 * so a message handed over twice is recognisable as one.
 */
export interface RowDoc {
  _id: string;
  workspace: string;
  campaign_id: string;
  party_id: string;
  name: string;
  address: string;
  /** 1..N within the campaign: the sender walks rows in this order; lists page by it. */
  pos: number;
  pos_key: string;
  status: RowStatus;
  message_id: string;
  attempts: number;
  /** The sender holding the row (a random token per claim) and until when; a later claim needs the lease to have run out. */
  claim: string | null;
  claimed_at: Date | null;
  lease_until: Date | null;
  sent_at: Date | null;
  /** When the account's own copy of the message reached its mailbox: proof the SMTP server took it. */
  confirmed_at: Date | null;
  detail: string | null;
  updated_at: Date;
}

const rowSchema = new Schema<RowDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, campaign_id: String, party_id: String, name: String, address: String,
  pos: Number, pos_key: String, status: String, message_id: String, attempts: { type: Number, default: 0 },
  claim: { type: String, default: null }, claimed_at: { type: Date, default: null }, lease_until: { type: Date, default: null },
  sent_at: { type: Date, default: null }, confirmed_at: { type: Date, default: null }, detail: { type: String, default: null }, updated_at: Date,
}, { versionKey: false });
rowSchema.index({ pos_key: 1 }, { unique: true });

/** The email_rows collection. */
export function emailRows(db: Connection): Model<RowDoc> {
  return modelOn<RowDoc>(db, 'EmailRow', rowSchema, 'email_rows');
}

/** The paging series of a campaign's rows. */
export function rowSeries(campaignId: string): string {
  return `email_rows:${campaignId}`;
}

/** The id of a campaign's row for a party. */
export function rowId(campaignId: string, partyId: string): string {
  return `${campaignId}.${partyId}`;
}

/** JSON Schema of {@link rowView}. */
export const ROW_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'campaign_id', 'party_id', 'name', 'address', 'status', 'message_id', 'attempts', 'sent_at', 'detail', 'updated_at'],
  properties: {
    id: TEXT, campaign_id: TEXT, party_id: TEXT, name: TEXT, address: TEXT, status: { enum: [...ROW_STATUSES] }, message_id: TEXT, attempts: { type: 'integer' },
    sent_at: { anyOf: [{ type: 'null' }, DATE_TIME_SCHEMA] }, detail: NULLABLE_TEXT, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of a row. */
export function rowView(r: RowDoc) {
  return {
    id: r._id, campaign_id: r.campaign_id, party_id: r.party_id, name: r.name, address: r.address, status: r.status, message_id: r.message_id,
    attempts: r.attempts, sent_at: r.sent_at?.toISOString() ?? null, detail: r.detail, updated_at: r.updated_at.toISOString(),
  };
}
