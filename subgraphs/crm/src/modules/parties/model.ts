import { addPositions, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { FISCAL_VIEW_SCHEMA, fiscalView, type PartyFiscal } from './fiscal.ts';

/** A party as stored. `_id` is our own prefixed string id (`pty_…`), never a Mongo ObjectId. */
export interface PartyDoc {
  _id: string;
  /** Every read and write filters on this: the workspace seal. */
  workspace: string;
  kind: 'customer' | 'vendor' | 'both';
  name: string;
  /** Lower-cased name, for case-insensitive search without a collation. */
  name_lc: string;
  tax_id: { type: string; number: string; check_digit: number | null } | null;
  /**
   * Uniqueness of a tax id within a workspace, enforced by a unique index. Parties without a
   * tax id get their own id here so they never collide (a partial index would do, but the
   * MongoDB subset we run on does not promise partial indexes).
   */
  tax_key: string;
  email: string | null;
  phone: string | null;
  addresses: { line1: string; city?: string; region?: string; country: string; postal_code?: string }[];
  contacts: { name: string; email?: string; phone?: string; role?: string }[];
  tags: string[];
  /** Values of the workspace's custom party fields (crm_fields), checked against their JSON Schema. */
  custom?: Record<string, unknown>;
  /** What a Colombian e-invoice says of the party (fiscal.ts); null until given. */
  fiscal?: PartyFiscal | null;
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
}

const partySchema = new Schema<PartyDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    kind: { type: String, required: true },
    name: { type: String, required: true },
    name_lc: { type: String, required: true },
    tax_id: { type: Schema.Types.Mixed, default: null },
    tax_key: { type: String, required: true },
    email: { type: String, default: null },
    phone: { type: String, default: null },
    addresses: { type: Schema.Types.Mixed, default: [] },
    contacts: { type: Schema.Types.Mixed, default: [] },
    tags: { type: [String], default: [] },
    custom: { type: Schema.Types.Mixed, default: {} },
    fiscal: { type: Schema.Types.Mixed, default: null },
    status: { type: String, required: true, default: 'active' },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
partySchema.index({ workspace: 1, created_at: -1 });
partySchema.index({ tax_key: 1 }, { unique: true });
// A site's lead finds the party already holding its e-mail (deals.create_from_lead).
partySchema.index({ workspace: 1, email: 1 });
// Lists page newest first by position (CONTRACT §9).
addPositions(partySchema);

/** The parties collection on this subgraph's connection. */
export function parties(db: Connection): Model<PartyDoc> {
  return modelOn<PartyDoc>(db, 'Party', partySchema, 'parties');
}


/** JSON Schema of {@link partyView}: what every tool answering a party gives. */
export const PARTY_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'kind', 'name', 'tax_id', 'email', 'phone', 'addresses', 'contacts', 'tags', 'fiscal', 'status', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    kind: { enum: ['customer', 'vendor', 'both'] },
    name: TEXT,
    tax_id: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['type', 'number', 'check_digit'],
        properties: { type: TEXT, number: TEXT, check_digit: { type: ['integer', 'null'] } },
      }],
    },
    email: NULLABLE_TEXT,
    phone: NULLABLE_TEXT,
    addresses: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['line1', 'country'], properties: { line1: TEXT, city: TEXT, region: TEXT, country: TEXT, postal_code: TEXT } },
    },
    contacts: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: TEXT, email: TEXT, phone: TEXT, role: TEXT } },
    },
    tags: { type: 'array', items: TEXT },
    custom: { type: 'object', description: 'Values of the workspace\'s custom party fields.' },
    /** What a Colombian e-invoice says of the party: person type, RUT name, fiscal responsibilities, tax, fiscal address (DANE codes). */
    fiscal: FISCAL_VIEW_SCHEMA,
    status: { enum: ['active', 'archived'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The public shape of a party (tool output). */
export function partyView(p: PartyDoc) {
  return {
    id: p._id,
    kind: p.kind,
    name: p.name,
    tax_id: p.tax_id ? { type: p.tax_id.type, number: p.tax_id.number, check_digit: p.tax_id.check_digit } : null,
    email: p.email,
    phone: p.phone,
    addresses: p.addresses,
    contacts: p.contacts,
    tags: p.tags,
    custom: p.custom ?? {},
    fiscal: fiscalView(p.fiscal),
    status: p.status,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}

/** Whether a party is of a kind asked for: `both` is a customer and a vendor, so asking for either includes it. */
export function isKind(p: PartyDoc, kind: string): boolean {
  return p.kind === kind || (kind !== 'both' && p.kind === 'both');
}

/** Whether a party matches a lower-cased search term: its name, tax id number or e-mail. */
/** The texts a party search looks in ({@link partyMatches}), whose trigrams are kept for it. */
export function partySearchTexts(p: Pick<PartyDoc, 'name_lc' | 'tax_id' | 'email'>): string[] {
  return [p.name_lc, p.tax_id?.number ?? '', p.email ?? ''];
}

export function partyMatches(p: PartyDoc, needle: string): boolean {
  return p.name_lc.includes(needle) || (p.tax_id?.number ?? '').includes(needle) || (p.email ?? '').toLowerCase().includes(needle);
}
