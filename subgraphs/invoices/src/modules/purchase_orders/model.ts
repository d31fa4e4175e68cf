import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, CuadraError, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT,
  type ToolContext,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { BillLine, VendorSnapshot } from '../bills/model.ts';

/**
 * A purchase order's life: draft → sent → partially_received → received → billed (converted into a
 * draft bill of what was received), or closed (nothing more will be received or billed).
 */
export const PURCHASE_ORDER_STATUSES = ['draft', 'sent', 'partially_received', 'received', 'billed', 'closed'] as const;
export type PurchaseOrderStatus = (typeof PURCHASE_ORDER_STATUSES)[number];

/** A line ordered: a bill line's fields and amounts, and how much of it has arrived. */
export interface PurchaseOrderLine extends BillLine {
  /** Received so far, in millionths of the unit (exact: receipts add integers, never floats). */
  received_micros: number;
}

/** One receipt: what arrived on a date, by line index. */
export interface Receipt { id: string; date: string; lines: { line: number; quantity: number }[] }

/** A purchase order to a vendor (crm party of kind vendor or both). One document, changed by conditional writes on `rev`. */
export interface PurchaseOrderDoc {
  _id: string;
  workspace: string;
  status: PurchaseOrderStatus;
  vendor_id: string;
  vendor: VendorSnapshot;
  currency: string;
  order_date: string;
  expected_date: string | null;
  lines: PurchaseOrderLine[];
  subtotal: number;
  tax_total: number;
  total: number;
  receipts: Receipt[];
  /** The draft bill it was converted into; chosen before the bill is written (a retry writes that one). */
  bill_id: string | null;
  /** What the conversion was asked for, kept so a conversion interrupted after choosing the bill's id can be finished. */
  conversion: { supplier_number: string; issue_date: string | null; due_date: string | null; from: PurchaseOrderStatus } | null;
  notes: string | null;
  search_lc: string;
  rev: number;
  sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<PurchaseOrderDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    vendor_id: { type: String, required: true },
    vendor: { type: Schema.Types.Mixed, required: true },
    currency: { type: String, required: true },
    order_date: { type: String, required: true },
    expected_date: { type: String, default: null },
    lines: { type: Schema.Types.Mixed, required: true },
    subtotal: { type: Number, required: true },
    tax_total: { type: Number, required: true },
    total: { type: Number, required: true },
    receipts: { type: Schema.Types.Mixed, default: [] },
    bill_id: { type: String, default: null },
    conversion: { type: Schema.Types.Mixed, default: null },
    notes: { type: String, default: null },
    search_lc: { type: String, required: true },
    rev: { type: Number, required: true },
    sent_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(schema);

/** The purchase orders collection. */
export function purchaseOrders(db: Connection): Model<PurchaseOrderDoc> {
  return (db.models.PurchaseOrder as Model<PurchaseOrderDoc> | undefined) ?? db.model<PurchaseOrderDoc>('PurchaseOrder', schema, 'purchase_orders');
}

/** Whether an order matches a lower-cased search term (the source and the list tool use this one test). */
export function purchaseOrderMatches(p: Pick<PurchaseOrderDoc, 'search_lc'>, needle: string): boolean {
  return p.search_lc.includes(needle);
}

/** An order of this workspace, or `not_found`. */
export async function findPurchaseOrder(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<PurchaseOrderDoc> {
  const doc = await purchaseOrders(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No purchase order ${id} exists in this workspace.`);
  return doc;
}

/**
 * Changes one order by a conditional update on its `rev` and status: `plan` reads the order and
 * decides (or refuses); the write applies only if nobody changed it meanwhile, else it tries again.
 */
export async function changePurchaseOrder(
  ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, id: string, from: readonly PurchaseOrderStatus[],
  plan: (doc: PurchaseOrderDoc) => { set: Partial<PurchaseOrderDoc>; push?: Record<string, unknown> },
): Promise<PurchaseOrderDoc> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const doc = await findPurchaseOrder(ctx, id);
    if (!from.includes(doc.status)) throw new CuadraError('conflict', `Purchase order ${id} is ${doc.status}; this needs it ${from.join(' or ')}.`);
    const change = plan(doc);
    const after = await purchaseOrders(ctx.db).findOneAndUpdate(
      { _id: id, workspace: ctx.workspace, rev: doc.rev, status: doc.status },
      { $set: { ...change.set, updated_at: ctx.now }, $inc: { rev: 1 }, ...(change.push ? { $push: change.push } : {}) },
      { returnDocument: 'after' },
    ).lean();
    if (after) return after;
  }
  throw new CuadraError('conflict', `Purchase order ${id} is being changed by other calls right now; try again.`);
}

/** JSON Schema of {@link purchaseOrderView}. */
export const PURCHASE_ORDER_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: [
    'id', 'status', 'vendor_id', 'vendor_name', 'currency', 'order_date', 'expected_date', 'lines', 'subtotal', 'tax_total', 'total', 'receipts', 'bill_id', 'notes',
    'sent_at', 'created_at', 'updated_at',
  ],
  properties: {
    id: TEXT, status: { enum: PURCHASE_ORDER_STATUSES }, vendor_id: TEXT, vendor_name: TEXT, currency: TEXT, order_date: DATE,
    expected_date: { anyOf: [DATE, { type: 'null' }] },
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false,
        required: ['description', 'account', 'quantity', 'received', 'outstanding', 'unit_price', 'discount_bps', 'tax_rate_ppm', 'subtotal', 'tax', 'total'],
        properties: {
          description: TEXT, account: TEXT, quantity: { type: 'number' }, received: { type: 'number', minimum: 0 }, outstanding: { type: 'number', minimum: 0 },
          unit_price: AMOUNT, discount_bps: { type: 'integer' }, tax_rate_ppm: { type: 'integer' }, subtotal: AMOUNT, tax: AMOUNT, total: AMOUNT,
        },
      },
    },
    subtotal: AMOUNT, tax_total: AMOUNT, total: AMOUNT,
    receipts: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['id', 'date', 'lines'],
        properties: {
          id: TEXT, date: DATE,
          lines: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['line', 'quantity'], properties: { line: { type: 'integer', minimum: 0 }, quantity: { type: 'number' } } } },
        },
      },
    },
    bill_id: NULLABLE_TEXT, notes: NULLABLE_TEXT,
    sent_at: { type: ['string', 'null'], format: 'date-time' }, created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

const MICROS = 1_000_000;

/** Public shape of a purchase order: quantities as numbers (exact to 6 decimals), received and outstanding per line. */
export function purchaseOrderView(p: PurchaseOrderDoc) {
  return {
    id: p._id, status: p.status, vendor_id: p.vendor_id, vendor_name: p.vendor.name, currency: p.currency, order_date: p.order_date, expected_date: p.expected_date,
    lines: p.lines.map((l) => {
      const ordered = Math.round(l.quantity * MICROS);
      return {
        description: l.description, account: l.account, quantity: l.quantity, received: l.received_micros / MICROS, outstanding: (ordered - l.received_micros) / MICROS,
        unit_price: l.unit_price, discount_bps: l.discount_bps, tax_rate_ppm: l.tax_rate_ppm, subtotal: l.subtotal, tax: l.tax, total: l.total,
      };
    }),
    subtotal: p.subtotal, tax_total: p.tax_total, total: p.total, receipts: p.receipts, bill_id: p.bill_id, notes: p.notes,
    sent_at: p.sent_at ? new Date(p.sent_at).toISOString() : null, created_at: new Date(p.created_at).toISOString(), updated_at: new Date(p.updated_at).toISOString(),
  };
}
