import { addPositions, DATE_TIME_SCHEMA, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Channels a party authorises (Ley 2300: only through channels the person authorised). */
export const CHANNELS = ['email'] as const;
export type Channel = (typeof CHANNELS)[number];

/** How a consent was given or withdrawn: Ley 1581 de 2012 asks for proof of the authorisation. */
export interface ConsentEvidence {
  source: 'form' | 'written' | 'verbal' | 'import' | 'double_opt_in' | 'site_form' | 'unsubscribe' | 'request';
  /** The wording the person agreed to, or the reason given. */
  text: string;
  /** A document, recording or form reference. */
  reference: string | null;
  /** Who recorded it: a member, a key, or `public` for the person themself through a link. */
  recorded_by: string;
  ip: string | null;
  user_agent: string | null;
  at: Date;
}

/** One party's consent on one channel, with its history. `_id` = `<workspace>|<party>|<channel>`: one per party and channel. */
export interface ConsentDoc {
  _id: string;
  workspace: string;
  party_id: string;
  channel: Channel;
  /** The address the consent is for (double opt-in confirms this one). */
  address: string | null;
  status: 'granted' | 'pending' | 'withdrawn';
  purpose: string;
  evidence: ConsentEvidence;
  history: { status: ConsentDoc['status']; evidence: ConsentEvidence }[];
  created_at: Date;
  updated_at: Date;
}

const consentSchema = new Schema<ConsentDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, party_id: String, channel: String, address: { type: String, default: null },
  status: String, purpose: String, evidence: Schema.Types.Mixed, history: { type: Schema.Types.Mixed, default: [] }, created_at: Date, updated_at: Date,
}, { versionKey: false });
addPositions(consentSchema);

/** The consents collection. */
export function consents(db: Connection): Model<ConsentDoc> {
  return modelOn<ConsentDoc>(db, 'Consent', consentSchema, 'marketing_consents');
}

/** The id of a party's consent on a channel. */
export function consentId(workspace: string, party: string, channel: Channel): string {
  return `${workspace}|${party}|${channel}`;
}

/**
 * An address that receives no more campaign mail in a workspace, and why: unsubscribed (RFC 8058
 * one-click or the link), a hard bounce, a complaint. `_id` = `<workspace>|<address lower case>`.
 */
export interface SuppressionDoc {
  _id: string;
  workspace: string;
  address: string;
  reason: 'unsubscribed' | 'bounced' | 'complained';
  detail: string | null;
  /** The message (row) it came from, when it came from one. */
  row_id: string | null;
  at: Date;
}

const suppressionSchema = new Schema<SuppressionDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, address: String, reason: String, detail: { type: String, default: null }, row_id: { type: String, default: null }, at: Date,
}, { versionKey: false });

/** The suppression list. */
export function suppressions(db: Connection): Model<SuppressionDoc> {
  return modelOn<SuppressionDoc>(db, 'Suppression', suppressionSchema, 'marketing_suppressions');
}

/** The id of an address on a workspace's suppression list. */
export function suppressionId(workspace: string, address: string): string {
  return `${workspace}|${address.trim().toLowerCase()}`;
}

/**
 * Adds an address to the suppression list; the first reason stays (an unsubscribed address that
 * later bounces is still "unsubscribed"). Idempotent.
 */
export async function suppress(db: Connection, entry: Omit<SuppressionDoc, '_id'>): Promise<void> {
  await suppressions(db).updateOne({ _id: suppressionId(entry.workspace, entry.address) }, { $setOnInsert: { ...entry, address: entry.address.toLowerCase() } }, { upsert: true }).catch((err: { code?: number }) => {
    if (err.code !== 11000) throw err;
  });
}

const EVIDENCE_VIEW = {
  type: 'object', additionalProperties: false, required: ['source', 'text', 'reference', 'recorded_by', 'at'],
  properties: { source: TEXT, text: TEXT, reference: NULLABLE_TEXT, recorded_by: TEXT, ip: NULLABLE_TEXT, user_agent: NULLABLE_TEXT, at: DATE_TIME_SCHEMA },
} as const;

/** JSON Schema of {@link consentView}. */
export const CONSENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['party_id', 'channel', 'address', 'status', 'purpose', 'evidence', 'history', 'updated_at'],
  properties: {
    party_id: TEXT, channel: { enum: [...CHANNELS] }, address: NULLABLE_TEXT, status: { enum: ['granted', 'pending', 'withdrawn'] }, purpose: TEXT,
    evidence: EVIDENCE_VIEW,
    history: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['status', 'evidence'], properties: { status: TEXT, evidence: EVIDENCE_VIEW } } },
    updated_at: DATE_TIME_SCHEMA,
  },
} as const;

function evidenceView(e: ConsentEvidence) {
  return { source: e.source, text: e.text, reference: e.reference, recorded_by: e.recorded_by, ip: e.ip, user_agent: e.user_agent, at: new Date(e.at).toISOString() };
}

/** The public shape of a consent. */
export function consentView(c: ConsentDoc) {
  return {
    party_id: c.party_id, channel: c.channel, address: c.address, status: c.status, purpose: c.purpose, evidence: evidenceView(c.evidence),
    history: c.history.map((h) => ({ status: h.status, evidence: evidenceView(h.evidence) })), updated_at: c.updated_at.toISOString(),
  };
}
