import { addPositions, searchIn, DATE_TIME_SCHEMA as DATE_TIME, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { CUSTOMER_SNAPSHOT_SCHEMA, DOCUMENT_BODY_VIEW_FIELDS, documentFields } from './document-fields.ts';
import type { CustomerSnapshot, SaleAmounts } from './fiscal-document.ts';

/**
 * A quote or a sales order: the commercial documents before an invoice.
 * Quote: draft → sent → accepted | declined → converted (to an invoice or a sales order).
 * Sales order: open → invoiced.
 */
export interface SalesDocument extends SaleAmounts {
  _id: string;
  workspace: string;
  kind: 'quote' | 'sales_order';
  status: 'draft' | 'sent' | 'accepted' | 'declined' | 'converted' | 'open' | 'invoiced';
  customer_id: string;
  customer: CustomerSnapshot;
  search_lc: string;
  currency: string;
  issue_date: string;
  /** Quotes: last day the offer holds. */
  valid_until: string | null;
  notes: string | null;
  /** Where it came from (a sales order from a quote; a quote, or what it became, from a crm deal). */
  source: { quote_id?: string; deal_id?: string } | null;
  /**
   * `<workspace>|<deal id>` on the quote made from a deal (unique): a deal is quoted once, so a retry
   * or a race of quotes.create_from_deal answers the quote already made. Absent on other documents.
   */
  deal_key?: string;
  /** What it became; the id is chosen before the target is written, so a retry writes the same one. */
  converted_to: { kind: 'invoice' | 'sales_order'; id: string } | null;
  /**
   * The day the conversion happened in the workspace's calendar (its target is dated so, whoever
   * writes it), set with `converted_to`. Absent on documents converted before the durable-operation
   * runner, until its sweep adopts them (modules/quotes/sales-ops.ts `conversionOperation`).
   */
  converted_on?: string;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<SalesDocument>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    kind: { type: String, required: true },
    status: { type: String, required: true },
    ...documentFields,
    valid_until: { type: String, default: null },
    notes: { type: String, default: null },
    source: { type: Schema.Types.Mixed, default: null },
    deal_key: { type: String },
    converted_to: { type: Schema.Types.Mixed, default: null },
    converted_on: { type: String },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
schema.index({ workspace: 1, kind: 1, created_at: -1 });
schema.index({ workspace: 1, kind: 1, status: 1 });
schema.index({ deal_key: 1 }, { unique: true, sparse: true });
// Lists page newest first by position; quotes and sales orders are two series (salesSeries).
addPositions(schema);

/** The quotes and sales orders collection. */
export function salesDocuments(db: Connection): Model<SalesDocument> {
  return modelOn<SalesDocument>(db, 'SalesDocument', schema, 'sales_documents');
}


/** JSON Schema of {@link salesDocumentView}: what every tool answering a quote or sales order gives. */
export const SALES_DOCUMENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: [
    'id', 'kind', 'status', 'customer_id', 'customer', 'currency', 'issue_date', 'valid_until', 'lines', 'withholding_rates', 'subtotal',
    'allowance_charges', 'allowance_total', 'charge_total', 'tax_total',
    'total', 'withholdings', 'withholding_total', 'amount_due', 'notes', 'source', 'converted_to', 'created_at', 'updated_at',
  ],
  properties: {
    id: TEXT,
    kind: { enum: ['quote', 'sales_order'] },
    status: { enum: ['draft', 'sent', 'accepted', 'declined', 'converted', 'open', 'invoiced'] },
    customer_id: TEXT,
    customer: CUSTOMER_SNAPSHOT_SCHEMA,
    currency: TEXT,
    issue_date: { type: 'string', format: 'date' },
    valid_until: { type: ['string', 'null'], format: 'date' },
    ...DOCUMENT_BODY_VIEW_FIELDS,
    notes: { type: ['string', 'null'] },
    source: { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, properties: { quote_id: TEXT, deal_id: TEXT } }] },
    converted_to: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['kind', 'id'],
        properties: { kind: { enum: ['invoice', 'sales_order'] }, id: TEXT },
      }],
    },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** Public shape of a quote or sales order. */
export function salesDocumentView(d: SalesDocument) {
  return {
    id: d._id, kind: d.kind, status: d.status, customer_id: d.customer_id, customer: d.customer, currency: d.currency, issue_date: d.issue_date,
    valid_until: d.valid_until, lines: d.lines, withholding_rates: d.withholding_rates, subtotal: d.subtotal, allowance_charges: d.allowance_charges ?? [],
    allowance_total: d.allowance_total ?? 0, charge_total: d.charge_total ?? 0, tax_total: d.tax_total, total: d.total,
    withholdings: d.withholdings, withholding_total: d.withholding_total, amount_due: d.amount_due, notes: d.notes, source: d.source,
    converted_to: d.converted_to, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString(),
  };
}

/** The paging series of quotes or of sales orders (one collection, two lists). */
export function salesSeries(kind: SalesDocument['kind']): { series: string; scope: { kind: SalesDocument['kind'] } } {
  return { series: kind === 'quote' ? 'quotes' : 'sales_orders', scope: { kind } };
}

/** Whether a quote or sales order matches a lower-cased search term (customer name, notes): the list tools and the records sources. */
export const salesDocumentMatches = searchIn<SalesDocument>('search_lc');

/** Statuses of a quote, in the order of its life (quotes.list and the records source `quotes`). */
export const QUOTE_STATUSES = ['draft', 'sent', 'accepted', 'declined', 'converted'] as const;
/** Statuses of a sales order (sales_orders.list and the records source `sales_orders`). */
export const SALES_ORDER_STATUSES = ['open', 'invoiced'] as const;

/** The compact row of a quote or sales order in records.list. */
export function salesRow(d: SalesDocument) {
  return {
    id: d._id, kind: d.kind, status: d.status, customer_id: d.customer_id, customer_name: d.customer.name, currency: d.currency,
    issue_date: d.issue_date, valid_until: d.valid_until, total: d.total, converted_to: d.converted_to,
  };
}
