import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, CuadraError, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, searchIn,
  TEXT_SCHEMA as TEXT, declareDerivedCollection, type ToolContext,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { CustomerSnapshot } from '../invoices/model.ts';

/** A rental's life: reserved → delivered → returned; a reservation may be cancelled before delivery. */
export const RENTAL_STATUSES = ['reserved', 'delivered', 'returned', 'cancelled'] as const;
export type RentalStatus = (typeof RENTAL_STATUSES)[number];

/** The unit a rental is priced in. */
export const RENTAL_UNITS = ['hour', 'day', 'month'] as const;
export type RentalUnit = (typeof RENTAL_UNITS)[number];

/** What is rented: a catalog item (finance items) or a fixed asset. */
export interface RentedResource {
  kind: 'item' | 'asset';
  id: string;
  name: string;
}

/** One billing period of a rental: the whole rental for hours and days, each month for months. */
export interface RentalPeriod {
  index: number;
  from: string;
  to: string;
  units: number;
  amount: number;
  invoice_id: string | null;
}

/** A rental of one resource to a customer over [start, end). */
/**
 * A rental's return. Damages are either invoiced whole (`settled_from_deposit` false: the deposit is
 * refunded in full) or settled first from the deposit (2810 → 4255 indemnizaciones, the
 * `settlement_entry_id`), the deposit left over refunded and the damages left over invoiced.
 * Returns recorded before settling existed lack the three amounts; {@link returnView} derives them.
 */
export interface RentalReturn {
  at: string;
  condition: string | null;
  damages: number;
  damages_description: string | null;
  damages_invoice_id: string | null;
  refund_entry_id: string | null;
  settled_from_deposit?: boolean;
  /** Of the damages, what the deposit covered (min(deposit, damages)). */
  deposit_applied?: number;
  /** Of the deposit, what goes back to the customer (deposit − deposit_applied). */
  refunded?: number;
  /** Of the damages, what is invoiced (damages − deposit_applied). */
  invoiced?: number;
  settlement_entry_id?: string | null;
}

/** A return as the view gives it: every amount stated. */
export function returnView(r: Pick<RentalDoc, 'deposit' | 'return'>) {
  const ret = r.return;
  if (!ret) return null;
  return {
    at: ret.at, condition: ret.condition, damages: ret.damages, damages_description: ret.damages_description, damages_invoice_id: ret.damages_invoice_id,
    refund_entry_id: ret.refund_entry_id, settled_from_deposit: ret.settled_from_deposit ?? false, deposit_applied: ret.deposit_applied ?? 0,
    refunded: ret.refunded ?? (ret.refund_entry_id ? r.deposit : 0), invoiced: ret.invoiced ?? ret.damages, settlement_entry_id: ret.settlement_entry_id ?? null,
  };
}

export interface RentalDoc {
  _id: string;
  workspace: string;
  status: RentalStatus;
  resource: RentedResource;
  customer_id: string;
  customer: CustomerSnapshot;
  currency: string;
  unit: RentalUnit;
  /** Price per unit, in cents, before VAT. */
  rate: number;
  tax_rate_ppm: number;
  /** RFC 3339 UTC instants; the rental holds the resource over [start, end). */
  start: string;
  end: string;
  periods: RentalPeriod[];
  deposit: number;
  /** The account the deposit is received into and refunded from (a bank or cash account). */
  deposit_account: string;
  delivery: { at: string; condition: string | null; deposit_entry_id: string | null } | null;
  return: RentalReturn | null;
  post: boolean;
  search_lc: string;
  rev: number;
  created_at: Date;
  updated_at: Date;
}

const rentalSchema = new Schema<RentalDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    resource: { type: Schema.Types.Mixed, required: true },
    customer_id: { type: String, required: true },
    customer: { type: Schema.Types.Mixed, required: true },
    currency: { type: String, required: true },
    unit: { type: String, required: true },
    rate: { type: Number, required: true },
    tax_rate_ppm: { type: Number, required: true },
    start: { type: String, required: true },
    end: { type: String, required: true },
    periods: { type: Schema.Types.Mixed, required: true },
    deposit: { type: Number, required: true },
    deposit_account: { type: String, required: true },
    delivery: { type: Schema.Types.Mixed, default: null },
    return: { type: Schema.Types.Mixed, default: null },
    post: { type: Boolean, required: true },
    search_lc: { type: String, required: true },
    rev: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(rentalSchema);

/** The rentals collection. */
export function rentals(db: Connection): Model<RentalDoc> {
  return modelOn<RentalDoc>(db, 'Rental', rentalSchema, 'rentals');
}

/**
 * The tombstone of a rental id withdrawn by the sweep (maintenance.ts): the booking that chose the
 * id died before its rental was stored, and its hold is released. Stored in `rentals` so the dead
 * attempt's insert, applied late, is refused on `_id`; its `workspace` is not the workspace's own
 * (`withdrawn:<workspace>`), so no reader of the workspace's rentals (get, list, records, the
 * lifecycle tools) ever sees it.
 */
export function withdrawnRental(workspace: string, rentalId: string, at: Date): { _id: string; workspace: string; withdrawn_at: Date } {
  return { _id: rentalId, workspace: withdrawnWorkspace(workspace), withdrawn_at: at };
}

/** The `workspace` a tombstone of this workspace's rentals carries: never a workspace's own (no reader filters on it). */
export function withdrawnWorkspace(workspace: string): string {
  return `withdrawn:${workspace}`;
}

/**
 * When a rental id was withdrawn: one document per tombstone, written before it, so the sweep finds
 * the tombstones to remove once no insert under their id can land any more (booking.ts,
 * TOMBSTONE_KEPT_MS) by reading this small collection — what a crash left in the last hour — never
 * by scanning `rentals`.
 */
export interface RentalWithdrawalDoc {
  /** The withdrawn rental id (the tombstone's `_id`). */
  _id: string;
  workspace: string;
  at: Date;
}

const withdrawalSchema = new Schema<RentalWithdrawalDoc>(
  { _id: { type: String, required: true }, workspace: { type: String, required: true }, at: { type: Date, required: true } },
  { versionKey: false },
);

/** The rental withdrawals collection. */
export function rentalWithdrawals(db: Connection): Model<RentalWithdrawalDoc> {
  return modelOn<RentalWithdrawalDoc>(db, 'RentalWithdrawal', withdrawalSchema, 'rental_withdrawals');
}

/**
 * The holds on one resource: one document per resource, carrying every rental that holds it
 * (reserved or delivered). A booking reads it, checks the overlap in memory and writes it back by
 * one conditional update on `rev`: of concurrent bookings on the same resource exactly one write
 * applies; the others read again and see the winner's hold (INFRA.md: conditional updates are
 * atomic on the MongoDB-protocol server as on MongoDB).
 */
export interface RentalCalendarDoc {
  /** `<workspace>|<kind>:<id>` */
  _id: string;
  workspace: string;
  rev: number;
  /** `confirmed` once the rental is written: an unconfirmed hold older than REPAIR_AFTER_MS whose rental never was is released by the sweep. */
  holds: { rental_id: string; start: string; end: string; at: Date; confirmed: boolean }[];
}

const calendarSchema = new Schema<RentalCalendarDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    rev: { type: Number, required: true },
    holds: { type: Schema.Types.Mixed, default: [] },
  },
  { versionKey: false, minimize: false },
);
calendarSchema.index({ 'holds.confirmed': 1 });

/**
 * The holds not confirmed yet, over every workspace: one document (`_id` {@link HOLD_WATCH_ID}) listing each as
 * `<calendar id> <rental id>`, added before the hold is claimed (claimHold) and taken out by the sweep once the
 * hold is confirmed, released or repaired (maintenance.ts). The sweep reads it and the calendars it names by `_id`:
 * the store builds no index on `holds.confirmed` (INFRA.md), so asking the calendars for unconfirmed holds walked
 * every workspace's calendars twice a second (issue 33, scan14). An entry is added before its hold and taken out
 * after, so a crash leaves an extra entry (one read, then gone), never a hold nobody watches. Its size is the holds
 * in flight plus the ones a dead booking left, not the store's.
 */
export interface RentalHoldWatchDoc {
  _id: string;
  holds: string[];
}

/** The watch's one document. */
export const HOLD_WATCH_ID = 'unconfirmed';

/** The hold watch collection (bookkeeping: declared derived, never run-stamped). */
export const RENTAL_HOLD_WATCH = 'rental_hold_watch';
declareDerivedCollection(RENTAL_HOLD_WATCH);

export function rentalHoldWatch(db: Connection) {
  return db.collection<RentalHoldWatchDoc>(RENTAL_HOLD_WATCH);
}

/** A watch entry: the calendar and the rental, split by a space (neither id holds one). */
export function holdWatchEntry(calendar: string, rentalId: string): string {
  return `${calendar} ${rentalId}`;
}

/** Adds a hold to the watch (idempotent; two first adds racing on the upsert: the loser adds again). */
export async function watchHold(db: Connection, calendar: string, rentalId: string): Promise<void> {
  const add = () => rentalHoldWatch(db).updateOne({ _id: HOLD_WATCH_ID }, { $addToSet: { holds: holdWatchEntry(calendar, rentalId) } }, { upsert: true });
  try {
    await add();
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    await add();
  }
}

/** The rental calendars collection. */
export function rentalCalendars(db: Connection): Model<RentalCalendarDoc> {
  return modelOn<RentalCalendarDoc>(db, 'RentalCalendar', calendarSchema, 'rental_calendars');
}

/** The calendar id of a resource. */
export function calendarId(workspace: string, r: Pick<RentedResource, 'kind' | 'id'>): string {
  return `${workspace}|${r.kind}:${r.id}`;
}

export const rentalMatches = searchIn<RentalDoc>('search_lc');

/** A rental of this workspace, or `not_found`. */
export async function findRental(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<RentalDoc> {
  const doc = await rentals(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No rental ${id} exists in this workspace.`);
  return doc;
}

/** JSON Schema of {@link rentalView}. */
export const RENTAL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'status', 'resource', 'customer_id', 'customer_name', 'currency', 'unit', 'rate', 'tax_rate_ppm', 'start', 'end', 'periods', 'total', 'deposit', 'deposit_account', 'delivery', 'return', 'post', 'created_at'],
  properties: {
    id: TEXT, status: { enum: RENTAL_STATUSES },
    resource: { type: 'object', additionalProperties: false, required: ['kind', 'id', 'name'], properties: { kind: { enum: ['item', 'asset'] }, id: TEXT, name: TEXT } },
    customer_id: TEXT, customer_name: TEXT, currency: TEXT, unit: { enum: RENTAL_UNITS }, rate: AMOUNT, tax_rate_ppm: { type: 'integer' }, start: DATE_TIME, end: DATE_TIME,
    periods: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['index', 'from', 'to', 'units', 'amount', 'invoice_id'],
        properties: { index: { type: 'integer' }, from: DATE_TIME, to: DATE_TIME, units: { type: 'integer' }, amount: AMOUNT, invoice_id: NULLABLE_TEXT },
      },
    },
    total: { ...AMOUNT, description: 'Σ periods before VAT.' },
    deposit: AMOUNT, deposit_account: TEXT,
    delivery: { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, required: ['at', 'condition', 'deposit_entry_id'], properties: { at: DATE_TIME, condition: NULLABLE_TEXT, deposit_entry_id: NULLABLE_TEXT } }] },
    return: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false,
        required: ['at', 'condition', 'damages', 'damages_description', 'damages_invoice_id', 'refund_entry_id', 'settled_from_deposit', 'deposit_applied', 'refunded', 'invoiced', 'settlement_entry_id'],
        properties: {
          at: DATE_TIME, condition: NULLABLE_TEXT, damages: AMOUNT, damages_description: NULLABLE_TEXT, damages_invoice_id: NULLABLE_TEXT, refund_entry_id: NULLABLE_TEXT,
          settled_from_deposit: { type: 'boolean' }, deposit_applied: { ...AMOUNT, description: 'Of the damages, what the deposit covered (2810 → 4255).' },
          refunded: { ...AMOUNT, description: 'Of the deposit, what was refunded.' }, invoiced: { ...AMOUNT, description: 'Of the damages, what was invoiced.' },
          settlement_entry_id: NULLABLE_TEXT,
        },
      }],
    },
    post: { type: 'boolean' }, created_at: DATE_TIME,
  },
} as const;

/** Public shape of a rental. */
export function rentalView(r: RentalDoc) {
  return {
    id: r._id, status: r.status, resource: r.resource, customer_id: r.customer_id, customer_name: r.customer.name, currency: r.currency, unit: r.unit, rate: r.rate,
    tax_rate_ppm: r.tax_rate_ppm, start: r.start, end: r.end, periods: r.periods, total: r.periods.reduce((s, p) => s + p.amount, 0), deposit: r.deposit,
    deposit_account: r.deposit_account, delivery: r.delivery, return: returnView(r), post: r.post, created_at: new Date(r.created_at).toISOString(),
  };
}
