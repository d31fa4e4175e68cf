import { addPositions, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** One line of a count sheet: an item of the warehouse, what the books expected, what was counted. */
export interface CountLine {
  item_id: string;
  item: string;
  sku: string | null;
  unit: string;
  /** On hand (millionths) when the sheet was made. */
  expected: number;
  /** Counted (millionths); null until the sheet comes back. */
  counted: number | null;
  /** The count-difference movement posted for it, once posted. */
  movement_id: string | null;
}

/**
 * A count sheet of one warehouse (a stock reconciliation): `open` (made, exported, filled in and
 * imported as often as needed) → `posted` (each difference written as a `count` movement with its
 * journal entry). Posting is idempotent by line: a post cut short is finished by posting again.
 */
export interface CountDoc {
  _id: string;
  workspace: string;
  warehouse_id: string;
  warehouse_code: string;
  date: string;
  status: 'open' | 'posted';
  lines: CountLine[];
  created_at: Date;
  posted_at: Date | null;
}

const countSchema = new Schema<CountDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, warehouse_id: String, warehouse_code: String, date: String,
  status: String, lines: Schema.Types.Mixed, created_at: Date, posted_at: Date,
}, { versionKey: false });
addPositions(countSchema);

/** The inventory_counts collection. */
export function inventoryCounts(db: Connection): Model<CountDoc> {
  return modelOn<CountDoc>(db, 'InventoryCount', countSchema, 'inventory_counts');
}
