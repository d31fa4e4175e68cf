import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** How the workspace declares VAT: from last year's income (auto), fixed, or not responsible for VAT. */
export const VAT_MODES = ['auto', 'bimonthly', 'four_monthly', 'not_responsible'] as const;

/**
 * The workspace's tax profile for the DIAN calendar: one document per workspace (`_id` = the
 * workspace). Without one the lane assumes a legal person that is not a large taxpayer, withholds
 * at source, and declares VAT by its income (`auto`), with the NIT of its e-invoicing set-up.
 */
export interface TaxProfileDoc {
  _id: string;
  workspace: string;
  /** The NIT without its check digit, or null to use the e-invoicing issuer's. */
  nit: string | null;
  check_digit: number | null;
  large_taxpayer: boolean;
  vat: (typeof VAT_MODES)[number];
  withholding_agent: boolean;
  income_tax: boolean;
  updated_at: Date;
}

const schema = new Schema<TaxProfileDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    nit: { type: String, default: null },
    check_digit: { type: Number, default: null },
    large_taxpayer: { type: Boolean, required: true },
    vat: { type: String, required: true },
    withholding_agent: { type: Boolean, required: true },
    income_tax: { type: Boolean, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);

/** The tax profiles collection. */
export function taxProfiles(db: Connection): Model<TaxProfileDoc> {
  return modelOn<TaxProfileDoc>(db, 'TaxProfile', schema, 'tax_profiles');
}

/** The profile a workspace has before it configures one. */
export function defaultProfile(workspace: string, now: Date): TaxProfileDoc {
  return { _id: workspace, workspace, nit: null, check_digit: null, large_taxpayer: false, vat: 'auto', withholding_agent: true, income_tax: true, updated_at: now };
}

/** JSON Schema of {@link profileView}. */
export const PROFILE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['nit', 'check_digit', 'large_taxpayer', 'vat', 'withholding_agent', 'income_tax', 'updated_at'],
  properties: {
    nit: { type: ['string', 'null'] }, check_digit: { type: ['integer', 'null'] }, large_taxpayer: { type: 'boolean' }, vat: { enum: VAT_MODES },
    withholding_agent: { type: 'boolean' }, income_tax: { type: 'boolean' }, updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The profile as tools answer it. */
export function profileView(p: TaxProfileDoc) {
  return {
    nit: p.nit, check_digit: p.check_digit, large_taxpayer: p.large_taxpayer, vat: p.vat, withholding_agent: p.withholding_agent,
    income_tax: p.income_tax, updated_at: new Date(p.updated_at).toISOString(),
  };
}
