import { addPositions, DATE_TIME_SCHEMA, modelOn, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** A place the workspace keeps stock (a shop, a store room, a distribution centre). */
export interface WarehouseDoc {
  _id: string;
  workspace: string;
  /** Short code shown on levels and count sheets; unique in the workspace (case-insensitive). */
  code: string;
  /** `<workspace>|<code lower-cased>`: the unique key. */
  code_key: string;
  name: string;
  name_lc: string;
  address: string | null;
  created_at: Date;
}

const warehouseSchema = new Schema<WarehouseDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true },
  code: String, code_key: String, name: String, name_lc: String, address: String, created_at: Date,
}, { versionKey: false });
warehouseSchema.index({ code_key: 1 }, { unique: true });
addPositions(warehouseSchema);

/** The warehouses collection. */
export function warehouses(db: Connection): Model<WarehouseDoc> {
  return modelOn<WarehouseDoc>(db, 'Warehouse', warehouseSchema, 'warehouses');
}

/** JSON Schema of {@link warehouseView}. */
export const WAREHOUSE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'code', 'name', 'address', 'created_at'],
  properties: { id: TEXT, code: TEXT, name: TEXT, address: { type: ['string', 'null'] }, created_at: DATE_TIME_SCHEMA },
} as const;

/** The public shape of a warehouse. */
export function warehouseView(w: WarehouseDoc) {
  return { id: w._id, code: w.code, name: w.name, address: w.address, created_at: w.created_at.toISOString() };
}
