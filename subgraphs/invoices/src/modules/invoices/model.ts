import {
  addPositions, searchIn, AMOUNT_SCHEMA as AMOUNT, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { OPEN_ITEM_RECORD_FIELDS, type OpenItemRecord } from '../../open-items/index.ts';
import { DELIVERY_VIEW_SCHEMA, deliveryView, type DeliveryState } from '../../e-documents/delivery.ts';
import { CUSTOMER_SNAPSHOT_SCHEMA, DOCUMENT_BODY_VIEW_FIELDS, documentFields } from '../../lib/document-fields.ts';
import type { CustomerFiscal, CustomerSnapshot, FiscalDocument, InvoiceLine, SaleAmounts } from '../../lib/fiscal-document.ts';

// Lines and the buyer's snapshot are what the e-documents read too (lib/fiscal-document.ts).
export type { CustomerFiscal, CustomerSnapshot, InvoiceLine };

/** A reduction of an invoice's balance (payment or credit note), dated, for aging at any `as_of`. */
export interface Settlement {
  ref: string;
  kind: 'payment' | 'credit_note';
  date: string;
  amount: number;
}

/** State of the submission to the e-invoicing authority. */
export interface AuthorityState {
  status: 'submitting' | 'accepted' | 'rejected';
  track_id: string | null;
  errors: string[];
  submitted_at: Date;
  attempts: number;
  endpoint: string;
}

/** Statuses of an invoice or credit note (invoices.list, the records source and the status rollups). */
export const INVOICE_STATUSES = ['draft', 'posted', 'partially_paid', 'paid', 'cancelled'] as const;

/**
 * An invoice or credit note (DOMAIN.md: draft → posted → partially_paid → paid; cancelled only
 * by a credit note). One document holds its lines, settlements and rollup intents, so every
 * change is one conditional write on `rev`. It is a {@link FiscalDocument}: the e-documents
 * (src/e-documents) read it through that narrow type, never this record.
 */
export interface InvoiceDoc extends OpenItemRecord, SaleAmounts, FiscalDocument {
  _id: string;
  workspace: string;
  kind: 'invoice' | 'credit_note' | 'debit_note';
  status: (typeof INVOICE_STATUSES)[number];
  /** Prefix + consecutive from the numbering range (`SETP990000001`); null until posted. */
  number: string | null;
  number_seq: number | null;
  /**
   * Unique per workspace (unique index): `<workspace>:<kind>:<number>` once numbered, else
   * `none:<id>` (the MongoDB subset here does not promise partial indexes; see PartyDoc.tax_key).
   */
  number_key: string;
  /** A crm Party id; the graph resolves it (Invoice.customer). */
  customer_id: string;
  customer: CustomerSnapshot;
  /** Lower-cased number, customer name and notes, for records search. */
  search_lc: string;
  currency: string;
  issue_date: string;
  /** Local time of posting with offset (`10:15:00-05:00`); null until posted. */
  issue_time: string | null;
  due_date: string;
  /** How the buyer pays (DIAN list 13.3.4.2, e.g. 10 cash, 42 bank deposit, 48 credit card); null: the workspace's default. */
  payment_means?: string | null;
  paid: number;
  credited: number;
  /** amount_due − paid − credited; 0 once settled. */
  balance: number;
  settlements: Settlement[];
  /** The date the balance reached zero; null while open. Aging at `as_of` reads invoices open then. */
  closed_on: string | null;
  /** CUFE of an invoice or CUDE of a credit note; null until posted. */
  cufe: string | null;
  /** Credit notes: the invoice credited and the DIAN concept (1 partial return … 5 other). */
  credit_of: string | null;
  /** Debit notes: the invoice the note adds to (its concept: 1 interest, 2 expenses, 3 change of value, 4 other). */
  debit_of?: string | null;
  concept: number | null;
  credit_notes: string[];
  journal_entry_id: string | null;
  authority: AuthorityState | null;
  /** The e-mail to the buyer of an accepted document (invoices.deliver); absent until one is sent. */
  delivery?: DeliveryState | null;
  source: { quote_id?: string; sales_order_id?: string; recurring_id?: string; deal_id?: string; rental_id?: string; subscription_id?: string; booking_id?: string; asset_id?: string } | null;
}

const invoiceSchema = new Schema<InvoiceDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    kind: { type: String, required: true },
    status: { type: String, required: true },
    number: { type: String, default: null },
    number_seq: { type: Number, default: null },
    number_key: { type: String, required: true },
    ...documentFields,
    issue_time: { type: String, default: null },
    due_date: { type: String, required: true },
    payment_means: { type: String, default: null },
    paid: { type: Number, required: true },
    credited: { type: Number, required: true },
    balance: { type: Number, required: true },
    settlements: { type: Schema.Types.Mixed, default: [] },
    closed_on: { type: String, default: null },
    cufe: { type: String, default: null },
    credit_of: { type: String, default: null },
    debit_of: { type: String, default: null },
    concept: { type: Number, default: null },
    credit_notes: { type: [String], default: [] },
    journal_entry_id: { type: String, default: null },
    authority: { type: Schema.Types.Mixed, default: null },
    delivery: { type: Schema.Types.Mixed, default: null },
    source: { type: Schema.Types.Mixed, default: null },
    ...OPEN_ITEM_RECORD_FIELDS,
  },
  { versionKey: false, minimize: false },
);
invoiceSchema.index({ workspace: 1, created_at: -1 });
invoiceSchema.index({ workspace: 1, status: 1 });
invoiceSchema.index({ workspace: 1, customer_id: 1 });
invoiceSchema.index({ workspace: 1, closed_on: 1 });
invoiceSchema.index({ workspace: 1, pending_count: 1 });
// One document per number: a retry or a race can never give two invoices the same number.
invoiceSchema.index({ number_key: 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(invoiceSchema);

/** The invoice a credit or debit note refers to (null for an invoice). */
export function referencedInvoiceId(doc: Pick<InvoiceDoc, 'credit_of' | 'debit_of'>): string | null {
  return doc.credit_of ?? doc.debit_of ?? null;
}

/** The invoices collection on this subgraph's connection. */
export function invoices(db: Connection): Model<InvoiceDoc> {
  return modelOn<InvoiceDoc>(db, 'Invoice', invoiceSchema, 'invoices');
}


/**
 * JSON Schema of {@link invoiceView}: what every tool answering an invoice or credit note gives.
 * The document key is `cufe` on an invoice and `cude` on a credit note (null until posted).
 */
export const INVOICE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: [
    'id', 'kind', 'status', 'number', 'customer_id', 'customer', 'currency', 'issue_date', 'issue_time', 'due_date', 'lines', 'withholding_rates',
    'subtotal', 'allowance_charges', 'allowance_total', 'charge_total', 'tax_total', 'total', 'withholdings', 'withholding_total', 'amount_due', 'paid', 'credited', 'balance', 'settlements',
    'credit_of', 'debit_of', 'concept', 'credit_notes', 'journal_entry_id', 'authority', 'delivery', 'source', 'notes', 'posted_at', 'created_at', 'updated_at',
  ],
  properties: {
    id: TEXT,
    kind: { enum: ['invoice', 'credit_note', 'debit_note'] },
    status: { enum: ['draft', 'posted', 'partially_paid', 'paid', 'cancelled'] },
    number: NULLABLE_TEXT,
    customer_id: TEXT,
    customer: CUSTOMER_SNAPSHOT_SCHEMA,
    currency: TEXT,
    issue_date: DATE,
    /** Local time of posting with its offset (`10:15:00-05:00`). */
    issue_time: { type: ['string', 'null'], pattern: '^\\d{2}:\\d{2}:\\d{2}[+-]\\d{2}:\\d{2}$' },
    due_date: DATE,
    ...DOCUMENT_BODY_VIEW_FIELDS,
    paid: AMOUNT,
    credited: AMOUNT,
    balance: AMOUNT,
    settlements: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['ref', 'kind', 'date', 'amount'],
        properties: { ref: TEXT, kind: { enum: ['payment', 'credit_note'] }, date: DATE, amount: AMOUNT },
      },
    },
    cufe: NULLABLE_TEXT,
    cude: NULLABLE_TEXT,
    credit_of: NULLABLE_TEXT,
    /** A debit note's invoice. */
    debit_of: NULLABLE_TEXT,
    concept: { enum: [1, 2, 3, 4, 5, null] },
    credit_notes: { type: 'array', items: TEXT },
    journal_entry_id: NULLABLE_TEXT,
    authority: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['status', 'track_id', 'errors', 'submitted_at'],
        properties: { status: { enum: ['submitting', 'accepted', 'rejected'] }, track_id: NULLABLE_TEXT, errors: { type: 'array', items: TEXT }, submitted_at: DATE_TIME },
      }],
    },
    /** The e-mail to the buyer (AttachedDocument and PDF): sent, bounced (the recipient was refused) or failed. */
    delivery: DELIVERY_VIEW_SCHEMA,
    source: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false,
        properties: { quote_id: TEXT, sales_order_id: TEXT, recurring_id: TEXT, deal_id: TEXT, rental_id: TEXT, subscription_id: TEXT, booking_id: TEXT, asset_id: TEXT },
      }],
    },
    notes: NULLABLE_TEXT,
    posted_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
  // An invoice carries its CUFE, a credit or debit note its CUDE (never both).
  if: { properties: { kind: { enum: ['credit_note', 'debit_note'] } } },
  then: { required: ['cude'], properties: { cude: NULLABLE_TEXT, cufe: false } },
  else: { required: ['cufe'], properties: { cufe: NULLABLE_TEXT, cude: false } },
} as const;

/** Public shape of an invoice (tool output). */
export function invoiceView(i: InvoiceDoc) {
  return {
    id: i._id, kind: i.kind, status: i.status, number: i.number, customer_id: i.customer_id, customer: i.customer, currency: i.currency,
    issue_date: i.issue_date, issue_time: i.issue_time, due_date: i.due_date, lines: i.lines, withholding_rates: i.withholding_rates,
    subtotal: i.subtotal, allowance_charges: i.allowance_charges ?? [], allowance_total: i.allowance_total ?? 0, charge_total: i.charge_total ?? 0,
    tax_total: i.tax_total, total: i.total, withholdings: i.withholdings, withholding_total: i.withholding_total,
    amount_due: i.amount_due, paid: i.paid, credited: i.credited, balance: i.balance, settlements: i.settlements,
    [i.kind === 'invoice' ? 'cufe' : 'cude']: i.cufe, credit_of: i.credit_of, debit_of: i.debit_of ?? null, concept: i.concept, credit_notes: i.credit_notes,
    journal_entry_id: i.journal_entry_id,
    authority: i.authority ? { status: i.authority.status, track_id: i.authority.track_id, errors: i.authority.errors, submitted_at: new Date(i.authority.submitted_at).toISOString() } : null,
    delivery: deliveryView(i.delivery), source: i.source, notes: i.notes, posted_at: i.posted_at ? new Date(i.posted_at).toISOString() : null,
    created_at: i.created_at.toISOString(), updated_at: i.updated_at.toISOString(),
  };
}

/** Whether an invoice or credit note matches a lower-cased search term (number, customer name, notes): invoices.list and the records source `invoices`. */
export const invoiceMatches = searchIn<InvoiceDoc>('search_lc');
