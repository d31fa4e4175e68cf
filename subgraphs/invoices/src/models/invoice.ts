import { Schema, type Connection, type Model } from 'mongoose';

/** One invoice line; amounts are computed once, at write time, and stored. */
export interface InvoiceLine {
  item_id: string | null;
  description: string;
  quantity: number;
  unit_price: number;
  discount_bps: number;
  tax_rate_bps: number;
  subtotal: number;
  tax: number;
  total: number;
}

/**
 * An invoice or credit note (DOMAIN.md: draft → posted → paid | partially_paid; cancelled only
 * by a credit note). One document holds its lines, so every change is one atomic write.
 */
export interface InvoiceDoc {
  _id: string;
  workspace: string;
  kind: 'invoice' | 'credit_note';
  status: 'draft' | 'posted' | 'partially_paid' | 'paid' | 'cancelled';
  /** Consecutive number from the numbering range; null until posted. */
  number: string | null;
  /** A crm Party id; the graph resolves it (Invoice.customer). */
  customer_id: string;
  currency: string;
  issue_date: string;
  due_date: string;
  lines: InvoiceLine[];
  subtotal: number;
  tax_total: number;
  total: number;
  notes: string | null;
  created_at: Date;
  updated_at: Date;
}

const invoiceSchema = new Schema<InvoiceDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    kind: { type: String, required: true },
    status: { type: String, required: true },
    number: { type: String, default: null },
    customer_id: { type: String, required: true },
    currency: { type: String, required: true },
    issue_date: { type: String, required: true },
    due_date: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    subtotal: { type: Number, required: true },
    tax_total: { type: Number, required: true },
    total: { type: Number, required: true },
    notes: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
invoiceSchema.index({ workspace: 1, created_at: -1 });
invoiceSchema.index({ workspace: 1, status: 1 });
invoiceSchema.index({ workspace: 1, customer_id: 1 });

/** The invoices collection on this subgraph's connection. */
export function invoices(db: Connection): Model<InvoiceDoc> {
  return (db.models.Invoice as Model<InvoiceDoc> | undefined) ?? db.model<InvoiceDoc>('Invoice', invoiceSchema, 'invoices');
}

/** Public shape of an invoice (tool output). */
export function invoiceView(i: InvoiceDoc) {
  return {
    id: i._id, kind: i.kind, status: i.status, number: i.number, customer_id: i.customer_id, currency: i.currency,
    issue_date: i.issue_date, due_date: i.due_date, lines: i.lines, subtotal: i.subtotal, tax_total: i.tax_total,
    total: i.total, notes: i.notes, created_at: i.created_at.toISOString(), updated_at: i.updated_at.toISOString(),
  };
}
