import { addPositions, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { JournalLine } from './journal.ts';
import type { Layer, StockState, ValuationMethod } from './valuation.ts';

/** Kinds of stock movement (the `kind` of the stock_movements source). */
export const MOVEMENT_TYPES = ['receipt', 'delivery', 'transfer_out', 'transfer_in', 'adjustment', 'count', 'write_down', 'revaluation', 'return', 'purchase_return'] as const;
export type MovementType = (typeof MOVEMENT_TYPES)[number];

/** The document a movement comes from (a bill, a purchase order's receipt, a posted invoice, a sales order, a count). */
export interface SourceRef { kind: string; id: string; line?: number }

/** A journal entry a movement asks the finance journal to hold (taken in through the `inventory_journal` feed). */
export interface MovementEntry { id: string; date: string; memo: string; lines: JournalLine[] }

/**
 * One line of the stock ledger: append-only. Its facts (type, item, warehouse, date, quantity,
 * source) never change; its valuation (value, the state after it) is restated only when a
 * backdated movement revalues what follows it, and then `restated` keeps what it was and the
 * revaluation movement that changed it carries the journal entry of the difference.
 */
export interface MovementDoc {
  _id: string;
  workspace: string;
  /** The balance (`<workspace>|<item>|<warehouse>`) it belongs to. */
  balance: string;
  item_id: string;
  warehouse_id: string;
  type: MovementType;
  /** Its date (YYYY-MM-DD); the ledger's order is (date, seq). */
  date: string;
  /** Its place among the balance's movements of the same date (the balance's counter when written). */
  seq: number;
  /** Signed quantity in millionths of a unit (in +, out −). */
  qty: number;
  /** Signed change of the carrying amount, minor units. */
  value: number;
  /** The write-down allowance released with goods leaving (minor units). */
  released: number;
  currency: string;
  /** The balance after this movement. */
  after: StockState;
  source: SourceRef | null;
  reason: string | null;
  /** The other side of a transfer; for a return, the delivery it brings back; for a purchase return, the receipt it sends back. */
  counterpart: string | null;
  /** A purchase return: what the vendor's credit note takes off 1435 for it (its line's net amount), beside the cost the goods left at (`value`). */
  price?: number;
  journal: MovementEntry | null;
  /** For a revaluation: the movements it restated, with their old and new values. */
  restates?: { id: string; warehouse_id: string; date: string; type: MovementType; old_value: number; new_value: number }[];
  /** Set on a movement a revaluation restated: the value it had, and by which revaluation. */
  restated?: { from_value: number; by: string } | null;
  created_at: Date;
}

const movementSchema = new Schema<MovementDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, balance: { type: String, required: true },
  item_id: String, warehouse_id: String, type: String, date: String, seq: Number, qty: Number, value: Number, released: Number, currency: String,
  after: Schema.Types.Mixed, source: Schema.Types.Mixed, reason: String, counterpart: String, price: Number, journal: Schema.Types.Mixed,
  restates: Schema.Types.Mixed, restated: Schema.Types.Mixed, created_at: Date,
}, { versionKey: false });
movementSchema.index({ balance: 1, date: 1, seq: 1 });
// The finance journal's feed reads movements that carry an entry by position.
addPositions(movementSchema);

/** The stock_movements collection. */
export function stockMovements(db: Connection): Model<MovementDoc> {
  return modelOn<MovementDoc>(db, 'StockMovement', movementSchema, 'stock_movements');
}

/** A balance's net change in one month (see `BalanceDoc.months`). */
export interface MonthChange { qty: number; value: number; days?: number }

/** The bit of `MonthChange.days` that marks a date's day. */
export function dayBit(date: string): number {
  return 2 ** (Number(date.slice(8, 10)) - 1);
}

/** The latest day marked in `days` on or before `date` (within `date`'s month), as a date; null when none is. */
export function latestMarkedDay(days: number, date: string): string | null {
  // Days 1..31 fit the 32-bit integers bitwise operators work on: keep bits 0..(day − 1).
  const upTo = days & (2 ** Number(date.slice(8, 10)) - 1);
  if (!upTo) return null;
  return `${date.slice(0, 8)}${String(32 - Math.clz32(upTo)).padStart(2, '0')}`;
}

/** A change the balance committed to and the ledger has not finished writing (see ledger.ts). */
export type PendingOp =
  | { key: string; op: 'insert'; doc: Omit<MovementDoc, 'created_at'> & { created_at: Date } }
  | { key: string; op: 'restate'; id: string; value: number; released: number; after: StockState; restated: { from_value: number; by: string } | null }
  | { key: string; op: 'revalue_in'; id: string; value: number; released: number; by: string }
  | { key: string; op: 'transfer_in'; to: { item_id: string; warehouse_id: string }; id: string; counterpart: string; date: string; qty: number; value: number; released: number; reason: string | null }
  | { key: string; op: 'day'; date: string; qty: number; value: number; version: number };

/**
 * One item in one warehouse: the running balance every read uses (stock_levels, inventory_value
 * never scan movements), and the one document every change of that stock is a compare-and-set
 * on (`version`): mongo-java-server applies a conditional update once (INFRA.md), so two
 * deliveries of the last unit cannot both see it.
 */
export interface BalanceDoc extends StockState {
  _id: string;
  workspace: string;
  item_id: string;
  item_name: string;
  item_sku: string | null;
  unit: string;
  warehouse_id: string;
  warehouse_code: string;
  method: ValuationMethod;
  allow_negative: boolean;
  /** At or below it (on hand less reserved), the level is `low`; millionths. */
  reorder_point: number;
  currency: string;
  /** Reserved by sales orders (millionths), in total and by order. */
  reserved: number;
  reservations: Record<string, number>;
  /** The last `seq` given to a movement of this balance. */
  seq: number;
  /** Raised by every change: the compare-and-set token. */
  version: number;
  /** The latest movement date: an earlier one is backdated. */
  last_date: string | null;
  /**
   * Net change by month (`YYYY-MM`): the value at a past date without reading the whole ledger.
   * `days`, a bit per day of the month with a movement (bit d − 1 for day d), says which
   * end-of-day snapshot answers a date inside it (the latest day moved on or before it): set on
   * months first moved since it was kept, so a month without it may have unmarked days.
   */
  months: Record<string, MonthChange>;
  /** Ledger writes committed by the last changes and not yet finished (see ledger.ts). */
  pending: PendingOp[];
  /** Ids of the latest movements applied: a retried source document is found here before its movement is written. */
  recent: string[];
  status: 'ok' | 'low';
  created_at: Date;
  layers: Layer[];
  /** Set on balances whose every day with a movement has its end-of-day snapshot (`stock_days`). */
  day_snapshots?: boolean;
}

const balanceSchema = new Schema<BalanceDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true },
  item_id: String, item_name: String, item_sku: String, unit: String, warehouse_id: String, warehouse_code: String,
  method: String, allow_negative: Boolean, reorder_point: Number, currency: String,
  qty: Number, value: Number, layers: Schema.Types.Mixed, allowance: Number, last_in: Schema.Types.Mixed,
  reserved: Number, reservations: Schema.Types.Mixed, seq: Number, version: Number, last_date: String,
  months: Schema.Types.Mixed, pending: Schema.Types.Mixed, recent: Schema.Types.Mixed, status: String, created_at: Date, day_snapshots: Boolean,
}, { versionKey: false, minimize: false });
balanceSchema.index({ workspace: 1, item_id: 1 });
balanceSchema.index({ 'pending.0': 1 }, { sparse: true });
addPositions(balanceSchema);

/** The stock_balances collection. */
export function stockBalances(db: Connection): Model<BalanceDoc> {
  return modelOn<BalanceDoc>(db, 'StockBalance', balanceSchema, 'stock_balances');
}

/** A balance's id. */
export function balanceId(workspace: string, itemId: string, warehouseId: string): string {
  return `${workspace}|${itemId}|${warehouseId}`;
}

/** How inventory keeps an item (per workspace and item): cost formula, negative stock, reorder point. */
export interface StockItemDoc {
  _id: string;
  workspace: string;
  item_id: string;
  name: string;
  sku: string | null;
  unit: string;
  currency: string;
  method: ValuationMethod;
  allow_negative: boolean;
  reorder_point: number;
  /** Set by its first movement: the cost formula is then fixed (§13.18 asks it be used consistently). */
  moved: boolean;
  created_at: Date;
}

const stockItemSchema = new Schema<StockItemDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, item_id: String, name: String, sku: String, unit: String,
  currency: String, method: String, allow_negative: Boolean, reorder_point: Number, moved: Boolean, created_at: Date,
}, { versionKey: false });

/** The stock_items collection (`_id` = `<workspace>|<item>`). */
export function stockItems(db: Connection): Model<StockItemDoc> {
  return modelOn<StockItemDoc>(db, 'StockItem', stockItemSchema, 'stock_items');
}

/**
 * A balance at the end of a day it moved (`_id` = `<balance id>|<date>`): the quantity and carrying
 * amount after that day's last movement, written from the balance's pending list (ledger.ts) and
 * rewritten by a backdated movement for every later day it restates. `version` is the balance's
 * version whose commit computed it: an older finisher never overwrites a newer snapshot. What
 * `inventory_value` reads at a past date inside a month (metrics.ts), instead of the movements.
 */
export interface DayDoc { _id: string; workspace: string; balance: string; date: string; qty: number; value: number; version: number }

const daySchema = new Schema<DayDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, balance: String, date: String, qty: Number, value: Number, version: Number,
}, { versionKey: false });
daySchema.index({ balance: 1, date: 1 });

/** The stock_days collection. */
export function stockDays(db: Connection): Model<DayDoc> {
  return modelOn<DayDoc>(db, 'StockDay', daySchema, 'stock_days');
}
