import { addPositions, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { LineInput } from '../items/document-lines.ts';
import type { CustomerSnapshot } from './model.ts';
import type { WithholdingRate } from '../../lib/money.ts';
import { CUSTOMER_SNAPSHOT_SCHEMA, WITHHOLDING_RATE_VIEW_SCHEMA } from '../../lib/document-fields.ts';

/** Statuses of a recurring schedule (`suspended`: its subscription is in dunning and issues nothing until paid; modules/plans/dunning.ts). */
export const RECURRING_STATUSES = ['active', 'suspended', 'ended', 'cancelled'] as const;

/**
 * A recurring invoice: a template issued every `every` weeks or months from `next_date` until
 * `end_date`. Each run makes the invoice of one period with an id derived from the schedule and
 * the period (`inv_r<schedule>_<date>`), so a retried or concurrent run never issues a period twice.
 */
export interface RecurringDoc {
  _id: string;
  workspace: string;
  status: (typeof RECURRING_STATUSES)[number];
  customer_id: string;
  customer: CustomerSnapshot;
  currency: string;
  lines: LineInput[];
  withholdings: WithholdingRate[];
  notes: string | null;
  interval: 'week' | 'month';
  every: number;
  /** Days from issue to due date. */
  due_days: number;
  /** Post each invoice as it is made (else it is left as a draft for review). */
  post: boolean;
  next_date: string;
  /** Day of month the schedule started on: months keep it (31 → 28 Feb → 31 Mar). */
  anchor_day: number;
  end_date: string | null;
  issued: number;
  /** The plan subscription this schedule bills (modules/plans), or null for a schedule made by hand. */
  subscription_id?: string | null;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<RecurringDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    customer_id: { type: String, required: true },
    customer: { type: Schema.Types.Mixed, required: true },
    currency: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    withholdings: { type: Schema.Types.Mixed, default: [] },
    notes: { type: String, default: null },
    interval: { type: String, required: true },
    every: { type: Number, required: true },
    due_days: { type: Number, required: true },
    post: { type: Boolean, required: true },
    next_date: { type: String, required: true },
    anchor_day: { type: Number, required: true },
    end_date: { type: String, default: null },
    issued: { type: Number, required: true },
    subscription_id: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
schema.index({ workspace: 1, status: 1, next_date: 1 });
// invoices.recurring_list pages schedules by position, newest first (CONTRACT §9).
addPositions(schema);

/** The recurring invoices collection. */
export function recurringInvoices(db: Connection): Model<RecurringDoc> {
  return modelOn<RecurringDoc>(db, 'RecurringInvoice', schema, 'recurring_invoices');
}

/** The date one period after `date` (months keep the day, clipped to the month's end). */
export function nextPeriod(date: string, interval: 'week' | 'month', every: number, anchorDay = Number(date.slice(8, 10))): string {
  const d = new Date(`${date}T00:00:00Z`);
  if (interval === 'week') {
    d.setUTCDate(d.getUTCDate() + 7 * every);
    return d.toISOString().slice(0, 10);
  }
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + every;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, m, Math.min(anchorDay, last))).toISOString().slice(0, 10);
}


/** The date one period before `date` on a schedule anchored at `anchorDay`: the inverse of {@link nextPeriod}. */
export function previousPeriod(date: string, interval: 'week' | 'month', every: number, anchorDay: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  if (interval === 'week') {
    d.setUTCDate(d.getUTCDate() - 7 * every);
    return d.toISOString().slice(0, 10);
  }
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() - every;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, m, Math.min(anchorDay, last))).toISOString().slice(0, 10);
}

/**
 * JSON Schema of {@link recurringView}: what every tool answering a schedule gives. Its lines are
 * kept as they were given (LineInput: priced again on every run), so they hold no amounts.
 */
export const RECURRING_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'status', 'customer_id', 'customer', 'currency', 'lines', 'withholdings', 'notes', 'interval', 'every', 'due_days', 'post', 'next_date', 'end_date', 'issued', 'created_at'],
  properties: {
    id: TEXT,
    status: { enum: RECURRING_STATUSES },
    customer_id: TEXT,
    customer: CUSTOMER_SNAPSHOT_SCHEMA,
    currency: TEXT,
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['quantity'],
        properties: {
          item_id: TEXT, description: TEXT, quantity: { type: 'number' }, unit: TEXT, unit_price: { type: 'integer' }, discount_bps: { type: 'integer' },
          tax_rate_ppm: { type: 'integer' }, withholdings: { type: 'array', items: WITHHOLDING_RATE_VIEW_SCHEMA },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
    withholdings: { type: 'array', items: WITHHOLDING_RATE_VIEW_SCHEMA },
    notes: { type: ['string', 'null'] },
    interval: { enum: ['week', 'month'] },
    every: { type: 'integer', minimum: 1 },
    due_days: { type: 'integer', minimum: 0 },
    post: { type: 'boolean' },
    next_date: { type: 'string', format: 'date' },
    end_date: { type: ['string', 'null'], format: 'date' },
    issued: { type: 'integer', minimum: 0 },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** Public shape of a schedule. */
export function recurringView(r: RecurringDoc) {
  return {
    id: r._id, status: r.status, customer_id: r.customer_id, customer: r.customer, currency: r.currency, lines: r.lines, withholdings: r.withholdings,
    notes: r.notes, interval: r.interval, every: r.every, due_days: r.due_days, post: r.post, next_date: r.next_date, end_date: r.end_date,
    issued: r.issued, created_at: r.created_at.toISOString(),
  };
}
