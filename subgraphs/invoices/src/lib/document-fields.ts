import { AMOUNT_SCHEMA, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { LINE_VAT_VIEW_SCHEMA } from './tax-regime.ts';
import { Schema } from 'mongoose';
import { WITHHOLDING_CONCEPT_KEYS } from '../accounting/withholdings.ts';

/**
 * Stored fields every sales document shares — invoices and credit notes, quotes and sales
 * orders: the buyer as captured on the document, and the amounts computed from its lines.
 */
export const documentFields = {
    customer_id: { type: String, required: true },
    customer: { type: Schema.Types.Mixed, required: true },
    search_lc: { type: String, required: true },
    currency: { type: String, required: true },
    issue_date: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    withholding_rates: { type: Schema.Types.Mixed, default: [] },
    subtotal: { type: Number, required: true },
    allowance_charges: { type: Schema.Types.Mixed, default: [] },
    allowance_total: { type: Number, default: 0 },
    charge_total: { type: Number, default: 0 },
    tax_total: { type: Number, required: true },
    total: { type: Number, required: true },
    withholdings: { type: Schema.Types.Mixed, default: [] },
    withholding_total: { type: Number, required: true },
    amount_due: { type: Number, required: true },
} as const;

// JSON Schemas of the parts every document view shares (tool outputs; see invoiceView,
// salesDocumentView, recurringView). Written once here, reused by every view that shows them.

const WITHHOLDING_TYPE = { enum: ['retefuente', 'reteiva', 'reteica'] } as const;

/** A withholding rate as stored and shown: `{type, rate_ppm}`. */
export const WITHHOLDING_RATE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['type', 'rate_ppm'],
  properties: { type: WITHHOLDING_TYPE, rate_ppm: { type: 'integer' } },
} as const;

/** A computed withholding of a document: `{type, rate_ppm, base, amount, concept?}` (minor units). */
export const WITHHOLDING_AMOUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['type', 'rate_ppm', 'base', 'amount'],
  properties: {
    type: WITHHOLDING_TYPE, rate_ppm: { type: 'integer' }, base: { type: 'integer' }, amount: { type: 'integer' },
    concept: { enum: WITHHOLDING_CONCEPT_KEYS, description: 'Retención en la fuente: the concept of the lines it was taken on.' },
  },
} as const;

const NULLABLE = { type: ['string', 'null'] } as const;

/** A buyer's fiscal profile on a document (CustomerFiscal). */
export const CUSTOMER_FISCAL_SCHEMA = {
  anyOf: [{ type: 'null' }, {
    type: 'object', additionalProperties: false, required: ['person_type', 'legal_name', 'responsibilities', 'tax_scheme', 'address'],
    properties: {
      person_type: { enum: ['legal', 'natural'] }, legal_name: NULLABLE, responsibilities: { type: 'array', items: TEXT }, tax_scheme: TEXT,
      address: {
        anyOf: [{ type: 'null' }, {
          type: 'object', additionalProperties: false, required: ['line', 'municipality_code', 'postal_code', 'country'],
          properties: { line: TEXT, municipality_code: NULLABLE, postal_code: NULLABLE, country: TEXT },
        }],
      },
    },
  }],
} as const;

/** The buyer as named on a document (CustomerSnapshot). */
export const CUSTOMER_SNAPSHOT_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['name', 'tax_id', 'email'],
  properties: {
    phone: NULLABLE,
    fiscal: CUSTOMER_FISCAL_SCHEMA,
    name: TEXT,
    tax_id: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['type', 'number', 'check_digit'],
        properties: { type: TEXT, number: TEXT, check_digit: { type: ['integer', 'null'] } },
      }],
    },
    email: { type: ['string', 'null'] },
  },
} as const;

/** A line's allowance or charge as shown: `{charge, reason, reason_code, rate_bps, base, amount}`. */
export const LINE_ALLOWANCE_CHARGE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['charge', 'reason', 'reason_code', 'rate_bps', 'base', 'amount'],
  properties: { charge: { type: 'boolean' }, reason: TEXT, reason_code: { type: ['string', 'null'] }, rate_bps: { type: 'integer' }, base: { type: 'integer' }, amount: { type: 'integer' } },
} as const;

/** A document-level allowance or charge as shown (lib/line-model.ts DocumentAllowanceCharge). */
export const DOCUMENT_ALLOWANCE_CHARGE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['charge', 'reason', 'reason_code', 'rate_bps', 'base', 'amount', 'tax_rate_ppm', 'tax'],
  properties: {
    charge: { type: 'boolean' }, reason: TEXT, reason_code: { type: ['string', 'null'] }, rate_bps: { type: ['integer', 'null'] },
    base: { type: 'integer' }, amount: { type: 'integer' }, tax_rate_ppm: { type: 'integer' }, tax: { type: 'integer' },
    /** Outside Colombia: its EN 16931 VAT category. */
    vat: { anyOf: [{ type: 'null' }, LINE_VAT_VIEW_SCHEMA] },
  },
} as const;

/**
 * A stored document line (InvoiceLine), amounts computed at write time. `credited_quantity` only
 * on invoice lines a credit note has reached; `invoice_line` only on credit-note lines.
 */
export const DOCUMENT_LINE_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['item_id', 'description', 'quantity', 'unit', 'unit_price', 'discount_bps', 'tax_rate_ppm', 'withholdings', 'subtotal', 'tax', 'total'],
  properties: {
    item_id: { type: ['string', 'null'] },
    warehouse_id: { type: 'string', description: 'A product line\'s inventory warehouse (absent: the workspace\'s default).' },
    description: TEXT,
    quantity: { type: 'number' },
    unit: TEXT,
    unit_price: { type: 'integer' },
    discount_bps: { type: 'integer' },
    /** round(quantity × unit price) (absent on lines written before it was kept). */
    gross: { type: 'integer' },
    /** The line's discount and charges: net (subtotal) = gross − allowances + charges. */
    allowance_charges: { type: 'array', items: LINE_ALLOWANCE_CHARGE_VIEW_SCHEMA },
    tax_rate_ppm: { type: 'integer' },
    /** Outside Colombia: the EN 16931 VAT category; null for a Colombian (IVA) line. */
    vat: { anyOf: [{ type: 'null' }, LINE_VAT_VIEW_SCHEMA] },
    withholdings: { type: 'array', items: WITHHOLDING_RATE_VIEW_SCHEMA },
    subtotal: { type: 'integer' },
    tax: { type: 'integer' },
    total: { type: 'integer' },
    credited_quantity: { type: 'number' },
    invoice_line: { type: 'integer' },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    account: { type: 'string', description: 'The account the line is credited to when it is not a sale: a debit note\'s income account (PUC class 4); on an invoice finance issues itself, 4245 for a fixed asset sold or 4255 for damages. Absent: a sale (413595).' },
    withholding_concept: { enum: WITHHOLDING_CONCEPT_KEYS },
  },
} as const;

/** The lines, withholding rates and totals every sales document's view carries (invoices, quotes, sales orders). */
export const DOCUMENT_BODY_VIEW_FIELDS = {
  lines: { type: 'array', items: DOCUMENT_LINE_SCHEMA },
  withholding_rates: { type: 'array', items: WITHHOLDING_RATE_VIEW_SCHEMA },
  subtotal: AMOUNT_SCHEMA,
  allowance_charges: { type: 'array', items: DOCUMENT_ALLOWANCE_CHARGE_VIEW_SCHEMA },
  allowance_total: AMOUNT_SCHEMA,
  charge_total: AMOUNT_SCHEMA,
  tax_total: AMOUNT_SCHEMA,
  total: AMOUNT_SCHEMA,
  withholdings: { type: 'array', items: WITHHOLDING_AMOUNT_VIEW_SCHEMA },
  withholding_total: AMOUNT_SCHEMA,
  amount_due: AMOUNT_SCHEMA,
} as const;
