import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, CuadraError, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, searchIn,
  TEXT_SCHEMA as TEXT, type ToolContext,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { ASSET_CLASS_KEYS, ASSET_CLASSES } from './classes.ts';
import { depreciableBase, DEPRECIATION_METHODS, type DepreciationTerms } from './depreciation.ts';
import type { CustomerSnapshot, InvoiceLine } from '../../lib/fiscal-document.ts';
import type { TaxRegime } from '../../lib/tax-regime.ts';

/**
 * An asset's life: `recording` (its acquisition entry is being written) → `active` → `disposing`
 * (its disposal entry is being written) → `sold` or `retired`. `recording` and `disposing` are
 * the intents of a two-step change: the next call or the sweep finishes them.
 */
export const ASSET_STATUSES = ['recording', 'active', 'disposing', 'sold', 'retired'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

/** One month of both books. */
export interface AssetMonth {
  month: string;
  niif: number;
  fiscal: number;
  niif_accumulated: number;
  fiscal_accumulated: number;
  /** The month's depreciation entry (NIIF book), or null when the month's NIIF amount is 0. */
  entry_id: string | null;
}

/** Where the asset came from: a posted bill's line (its entry already debited the asset account), or recorded by hand with its own entry. */
export type AssetOrigin =
  | { kind: 'bill'; bill_id: string; line: number }
  | { kind: 'manual'; credit_account: string; entry_id: string };

/**
 * The invoice of a sale to a customer, as the disposal's intent holds it: priced when the sale was
 * asked for, so a retry or the sweep issues exactly this invoice under its id.
 */
export interface SaleInvoice {
  id: string;
  customer: CustomerSnapshot;
  lines: InvoiceLine[];
  /** The tax regime its post numbers and keys it under (lib/tax-regime.ts). */
  regime: TaxRegime;
}

/** A sale or retirement: what came in, where, and the result in each book. */
export interface AssetDisposal {
  date: string;
  proceeds: number;
  /** Where the proceeds were debited directly (a sale not invoiced here), or null. */
  proceeds_account: string | null;
  party_id: string | null;
  reason: string | null;
  entry_id: string;
  /** A sale invoiced to `party_id`: its invoice (absent on disposals recorded before invoiced sales). */
  invoice?: SaleInvoice | null;
  /** The invoice's due date (default the sale's date). */
  due_date?: string | null;
  /** proceeds − NIIF carrying amount: > 0 a gain (4245), < 0 a loss (5310). */
  gain: number;
  /** proceeds − fiscal carrying amount (cost − fiscal depreciation): what the income-tax return sees. */
  fiscal_gain: number;
}

/** A fixed asset in two books: NIIF para pymes §17 (posted monthly to the journal) and fiscal (ET art. 137; kept beside it). */
export interface AssetDoc extends DepreciationTerms {
  _id: string;
  workspace: string;
  name: string;
  status: AssetStatus;
  currency: string;
  acquisition_date: string;
  in_service_date: string;
  /** The next month either book depreciates (`YYYY-MM`); the run posts months in order from here. */
  next_month: string;
  /** Months of service depreciated so far (k of the formulas in depreciation.ts). */
  months: number;
  niif_accumulated: number;
  fiscal_accumulated: number;
  /** Units of production recorded per month (`YYYY-MM` → units), for months not yet depreciated and those done. */
  usage: Record<string, number>;
  /** Units produced in the months already depreciated. */
  units_to_date: number;
  schedule: AssetMonth[];
  origin: AssetOrigin;
  disposal: AssetDisposal | null;
  search_lc: string;
  rev: number;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<AssetDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    class: { type: String, required: true },
    status: { type: String, required: true },
    currency: { type: String, required: true },
    cost: { type: Number, required: true },
    residual_value: { type: Number, required: true },
    useful_life_months: { type: Number, required: true },
    method: { type: String, required: true },
    declining_rate_bps: { type: Number, default: null },
    total_units: { type: Number, default: null },
    acquisition_date: { type: String, required: true },
    in_service_date: { type: String, required: true },
    next_month: { type: String, required: true },
    months: { type: Number, required: true },
    niif_accumulated: { type: Number, required: true },
    fiscal_accumulated: { type: Number, required: true },
    usage: { type: Schema.Types.Mixed, default: {} },
    units_to_date: { type: Number, default: 0 },
    schedule: { type: Schema.Types.Mixed, default: [] },
    origin: { type: Schema.Types.Mixed, required: true },
    disposal: { type: Schema.Types.Mixed, default: null },
    search_lc: { type: String, required: true },
    rev: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// The monthly run reads the workspace's assets still depreciating, oldest month first.
schema.index({ workspace: 1, status: 1, next_month: 1 });
addPositions(schema);

/** The fixed assets collection. */
export function assets(db: Connection): Model<AssetDoc> {
  return modelOn<AssetDoc>(db, 'FixedAsset', schema, 'fixed_assets');
}

/** Whether an asset matches a lower-cased search term (its name and class). */
export const assetMatches = searchIn<AssetDoc>('search_lc');

/** An asset of this workspace, or `not_found`. */
export async function findAsset(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<AssetDoc> {
  const doc = await assets(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No fixed asset ${id} exists in this workspace.`);
  return doc;
}

/** Both books' carrying amounts and their difference. */
export function carryingAmounts(a: Pick<AssetDoc, 'cost' | 'niif_accumulated' | 'fiscal_accumulated'>) {
  const niif = a.cost - a.niif_accumulated;
  const fiscal = a.cost - a.fiscal_accumulated;
  // Tax base − carrying amount: > 0 a deductible temporary difference (deferred tax asset), < 0 a taxable one.
  return { niif_net: niif, fiscal_net: fiscal, deferred_tax_basis: fiscal - niif };
}

const MONTH = { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' } as const;

/** JSON Schema of {@link assetView}. */
export const ASSET_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: [
    'id', 'name', 'class', 'class_name', 'status', 'currency', 'cost', 'residual_value', 'useful_life_months', 'method', 'declining_rate_bps', 'total_units',
    'acquisition_date', 'in_service_date', 'accounts', 'fiscal_cap_bps', 'next_month', 'months_depreciated', 'niif_accumulated', 'fiscal_accumulated',
    'niif_net', 'fiscal_net', 'deferred_tax_basis', 'usage', 'schedule', 'origin', 'disposal', 'created_at', 'updated_at',
  ],
  properties: {
    id: TEXT, name: TEXT, class: { enum: ASSET_CLASS_KEYS }, class_name: TEXT, status: { enum: ASSET_STATUSES }, currency: TEXT,
    cost: AMOUNT, residual_value: AMOUNT, useful_life_months: { type: 'integer' }, method: { enum: DEPRECIATION_METHODS },
    declining_rate_bps: { type: ['integer', 'null'] }, total_units: { type: ['integer', 'null'] },
    acquisition_date: DATE, in_service_date: DATE,
    accounts: {
      type: 'object', additionalProperties: false, required: ['cost', 'accumulated_depreciation', 'depreciation_expense'],
      properties: { cost: TEXT, accumulated_depreciation: TEXT, depreciation_expense: TEXT },
    },
    fiscal_cap_bps: { type: 'integer', description: 'The class\'s maximum annual fiscal rate (Estatuto Tributario art. 137), in basis points.' },
    next_month: MONTH, months_depreciated: { type: 'integer' },
    niif_accumulated: AMOUNT, fiscal_accumulated: AMOUNT, niif_net: AMOUNT, fiscal_net: AMOUNT,
    deferred_tax_basis: { ...AMOUNT, description: 'Fiscal carrying amount − NIIF carrying amount: > 0 a deductible temporary difference (deferred tax asset), < 0 a taxable one.' },
    usage: { type: 'object', additionalProperties: { type: 'integer' } },
    schedule: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['month', 'niif', 'fiscal', 'niif_accumulated', 'fiscal_accumulated', 'entry_id'],
        properties: { month: MONTH, niif: AMOUNT, fiscal: AMOUNT, niif_accumulated: AMOUNT, fiscal_accumulated: AMOUNT, entry_id: NULLABLE_TEXT },
      },
    },
    origin: {
      type: 'object', additionalProperties: false, required: ['kind'],
      properties: { kind: { enum: ['bill', 'manual'] }, bill_id: TEXT, line: { type: 'integer' }, credit_account: TEXT, entry_id: TEXT },
    },
    disposal: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false,
        required: ['date', 'proceeds', 'proceeds_account', 'party_id', 'reason', 'entry_id', 'invoice_id', 'gain', 'fiscal_gain', 'niif_net', 'fiscal_net', 'deferred_tax_basis'],
        properties: {
          date: DATE, proceeds: AMOUNT, proceeds_account: NULLABLE_TEXT, party_id: NULLABLE_TEXT, reason: NULLABLE_TEXT, entry_id: TEXT,
          invoice_id: { ...NULLABLE_TEXT, description: 'The customer invoice of a sale to party_id (posted once; its price credited to 4245 and netted by the disposal entry), or null.' },
          gain: AMOUNT, fiscal_gain: AMOUNT,
          niif_net: { ...AMOUNT, description: 'NIIF carrying amount when it left (cost − accumulated depreciation).' },
          fiscal_net: { ...AMOUNT, description: 'Fiscal carrying amount when it left (cost − fiscal depreciation, ET art. 137): its tax cost.' },
          deferred_tax_basis: { ...AMOUNT, description: 'fiscal_net − niif_net at the sale: the temporary difference the sale reverses (fiscal_gain = gain − this).' },
        },
      }],
    },
    created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** Public shape of a disposal: both books' carrying amounts when it left, read back from the results. */
function disposalView(d: AssetDisposal) {
  const niif = d.proceeds - d.gain;
  const fiscal = d.proceeds - d.fiscal_gain;
  return {
    date: d.date, proceeds: d.proceeds, proceeds_account: d.proceeds_account, party_id: d.party_id, reason: d.reason, entry_id: d.entry_id,
    invoice_id: d.invoice?.id ?? null, gain: d.gain, fiscal_gain: d.fiscal_gain, niif_net: niif, fiscal_net: fiscal, deferred_tax_basis: fiscal - niif,
  };
}

/** Public shape of an asset: both books, their difference, the month-by-month schedule. */
export function assetView(a: AssetDoc) {
  const cls = ASSET_CLASSES[a.class];
  return {
    id: a._id, name: a.name, class: a.class, class_name: cls.name, status: a.status, currency: a.currency, cost: a.cost, residual_value: a.residual_value,
    useful_life_months: a.useful_life_months, method: a.method, declining_rate_bps: a.declining_rate_bps, total_units: a.total_units,
    acquisition_date: a.acquisition_date, in_service_date: a.in_service_date,
    accounts: { cost: cls.cost, accumulated_depreciation: cls.accumulated, depreciation_expense: cls.expense }, fiscal_cap_bps: cls.fiscal_cap_bps,
    next_month: a.next_month, months_depreciated: a.months, niif_accumulated: a.niif_accumulated, fiscal_accumulated: a.fiscal_accumulated,
    ...carryingAmounts(a), usage: a.usage, schedule: a.schedule, origin: a.origin, disposal: a.disposal && disposalView(a.disposal),
    created_at: new Date(a.created_at).toISOString(), updated_at: new Date(a.updated_at).toISOString(),
  };
}

/** Whether both books have taken the whole depreciable amount. */
export function fullyDepreciated(a: AssetDoc): boolean {
  const base = depreciableBase(a);
  return a.niif_accumulated >= base && a.fiscal_accumulated >= base;
}
