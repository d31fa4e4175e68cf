import { addPositions, DATE_SCHEMA, DATE_TIME_SCHEMA, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, type DerivedIntent } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** One stage change of a deal: the history `deals.move`, `win`, `lose` and `reopen` keep. */
export interface StageChange {
  from: string | null;
  to: string;
  at: Date;
  /** The member, key or agent that moved it (the caller's actor id). */
  by: string;
}

/** A line of what the deal sells: what a quote made from it will carry. */
export interface DealLine {
  description: string;
  quantity: number;
  unit_price: number;
  discount_bps: number;
  tax_rate_ppm: number;
  item_id: string | null;
  /** quantity × unit price × (1 − discount), rounded once (shared lineAmounts). */
  subtotal: number;
}

/** A deal as stored. `_id` is `dl_…`. */
export interface DealDoc {
  _id: string;
  workspace: string;
  title: string;
  party_id: string | null;
  /** The party's name when the deal was last written: shown on cards and searched. */
  party_name: string | null;
  /** The deal's value before taxes, in the pipeline's currency (minor units): the lines' subtotals when it has lines. */
  amount: number;
  currency: string;
  owner_id: string | null;
  expected_close: string | null;
  pipeline_id: string;
  stage_id: string;
  /** open in an open stage, won or lost in a closed one. */
  status: 'open' | 'won' | 'lost';
  /** Place in its column (fractional-indexing key; ties broken by id). */
  order_key: string;
  lines: DealLine[];
  custom: Record<string, unknown>;
  tags: string[];
  lost_reason: string | null;
  lost_note: string | null;
  /** When it entered its stage: rotting and days in stage count from here. */
  stage_entered_at: Date;
  /** When it was won or lost (null while open). */
  closed_at: Date | null;
  history: StageChange[];
  /** Search keys (prefixes of its normalised words) it is listed under in the search index. */
  search_keys: string[];
  /** Bumped by every change: the condition of the next, so concurrent moves apply one at a time. */
  version: number;
  /** Changes to columns and counters in flight (shared derived.ts). */
  pending_derived: DerivedIntent[];
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<DealDoc>(
  {
    _id: { type: String, required: true }, workspace: { type: String, required: true }, title: { type: String, required: true },
    party_id: { type: String, default: null }, party_name: { type: String, default: null }, amount: { type: Number, required: true }, currency: { type: String, required: true },
    owner_id: { type: String, default: null }, expected_close: { type: String, default: null }, pipeline_id: { type: String, required: true }, stage_id: { type: String, required: true },
    status: { type: String, required: true }, order_key: { type: String, required: true }, lines: { type: Schema.Types.Mixed, default: [] }, custom: { type: Schema.Types.Mixed, default: {} },
    tags: { type: [String], default: [] }, lost_reason: { type: String, default: null }, lost_note: { type: String, default: null },
    stage_entered_at: { type: Date, required: true }, closed_at: { type: Date, default: null }, history: { type: Schema.Types.Mixed, default: [] },
    search_keys: { type: [String], default: [] }, version: { type: Number, required: true }, pending_derived: { type: Schema.Types.Mixed, default: [] },
    created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// deals.list and the crm_deals source page newest first by position (CONTRACT §9).
addPositions(schema);

/** The deals collection. */
export function deals(db: Connection): Model<DealDoc> {
  return modelOn<DealDoc>(db, 'CrmDeal', schema, 'crm_deals');
}

/** History kept on a deal: the newest changes (a deal moved more often keeps its last ones). */
export const HISTORY_KEPT = 500;

const LINE_VIEW = {
  type: 'object', additionalProperties: false, required: ['description', 'quantity', 'unit_price', 'discount_bps', 'tax_rate_ppm', 'item_id', 'subtotal'],
  properties: { description: TEXT, quantity: { type: 'number' }, unit_price: { type: 'integer' }, discount_bps: { type: 'integer' }, tax_rate_ppm: { type: 'integer' }, item_id: NULLABLE_TEXT, subtotal: { type: 'integer' } },
} as const;

/** JSON Schema of {@link dealView}. */
export const DEAL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'title', 'party_id', 'party_name', 'amount', 'currency', 'owner_id', 'expected_close', 'pipeline_id', 'stage_id', 'status', 'sort_key', 'lines', 'custom', 'tags', 'lost_reason', 'lost_note', 'stage_entered_at', 'closed_at', 'history', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, title: TEXT, party_id: NULLABLE_TEXT, party_name: NULLABLE_TEXT, amount: { type: 'integer' }, currency: TEXT, owner_id: NULLABLE_TEXT,
    expected_close: { anyOf: [DATE_SCHEMA, { type: 'null' }] }, pipeline_id: TEXT, stage_id: TEXT, status: { enum: ['open', 'won', 'lost'] }, sort_key: { type: 'string', description: 'Its fractional order key in its column (ties: by id).' },
    lines: { type: 'array', items: LINE_VIEW }, custom: { type: 'object' }, tags: { type: 'array', items: TEXT }, lost_reason: NULLABLE_TEXT, lost_note: NULLABLE_TEXT,
    stage_entered_at: DATE_TIME_SCHEMA, closed_at: { anyOf: [DATE_TIME_SCHEMA, { type: 'null' }] },
    history: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['from', 'to', 'at', 'by'], properties: { from: NULLABLE_TEXT, to: TEXT, at: DATE_TIME_SCHEMA, by: TEXT } },
    },
    created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

const iso = (d: Date | string) => new Date(d).toISOString();

/** The public shape of a deal. */
export function dealView(d: DealDoc) {
  return {
    id: d._id, title: d.title, party_id: d.party_id, party_name: d.party_name, amount: d.amount, currency: d.currency, owner_id: d.owner_id,
    expected_close: d.expected_close, pipeline_id: d.pipeline_id, stage_id: d.stage_id, status: d.status, sort_key: d.order_key, lines: d.lines,
    custom: d.custom ?? {}, tags: d.tags, lost_reason: d.lost_reason, lost_note: d.lost_note, stage_entered_at: iso(d.stage_entered_at),
    closed_at: d.closed_at ? iso(d.closed_at) : null, history: d.history.map((h) => ({ from: h.from, to: h.to, at: iso(h.at), by: h.by })),
    created_at: iso(d.created_at), updated_at: iso(d.updated_at),
  };
}
