import { addPositions, searchIn, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { WITHHOLDING_CONCEPT_KEYS, type WithholdingConceptKey } from '../../accounting/withholdings.ts';

/** A product or service of the workspace's catalog. */
export interface ItemDoc {
  _id: string;
  workspace: string;
  kind: 'product' | 'service';
  name: string;
  name_lc: string;
  /** Unique per workspace when given; items without a SKU get their own id here (see PartyDoc.tax_key). */
  sku: string | null;
  sku_key: string;
  /** UN/ECE Recommendation 20 unit code (94 = unit, HUR = hour, KGM = kilogram…), as UBL wants it. */
  unit: string;
  /** Price per unit in minor units of `currency`, before tax. */
  price: number;
  currency: string;
  tax_rate_ppm: number;
  /**
   * The concept of retención en la fuente a buyer withholds on it (accounting/withholdings.ts); null:
   * servicios for a service, compras for a product. Its invoice lines carry it.
   */
  withholding_concept?: WithholdingConceptKey | null;
  status: 'active' | 'archived';
  created_at: Date;
}

const itemSchema = new Schema<ItemDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    kind: { type: String, required: true },
    name: { type: String, required: true },
    name_lc: { type: String, required: true },
    sku: { type: String, default: null },
    sku_key: { type: String, required: true },
    unit: { type: String, required: true },
    price: { type: Number, required: true },
    currency: { type: String, required: true },
    tax_rate_ppm: { type: Number, required: true },
    withholding_concept: { type: String, default: null },
    status: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
itemSchema.index({ workspace: 1, created_at: -1 });
itemSchema.index({ sku_key: 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(itemSchema);

/** The items collection on this subgraph's connection. */
export function items(db: Connection): Model<ItemDoc> {
  return modelOn<ItemDoc>(db, 'Item', itemSchema, 'items');
}

/** JSON Schema of {@link itemView}: what every tool answering a catalog item gives. */
export const ITEM_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'kind', 'name', 'sku', 'unit', 'price', 'tax_rate_ppm', 'status', 'created_at'],
  properties: {
    id: { type: 'string' },
    kind: { enum: ['product', 'service'] },
    name: { type: 'string' },
    sku: { type: ['string', 'null'] },
    unit: { type: 'string' },
    price: {
      type: 'object', additionalProperties: false, required: ['amount', 'currency'],
      properties: { amount: { type: 'integer' }, currency: { type: 'string' } },
    },
    tax_rate_ppm: { type: 'integer' },
    withholding_concept: { anyOf: [{ type: 'null' }, { enum: WITHHOLDING_CONCEPT_KEYS }], description: 'Concept of retención en la fuente on its sales; null: servicios for a service, compras for a product.' },
    status: { enum: ['active', 'archived'] },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** Public shape of an item. */
export function itemView(i: ItemDoc) {
  return {
    id: i._id, kind: i.kind, name: i.name, sku: i.sku, unit: i.unit,
    price: { amount: i.price, currency: i.currency }, tax_rate_ppm: i.tax_rate_ppm, withholding_concept: i.withholding_concept ?? null, status: i.status,
    created_at: i.created_at.toISOString(),
  };
}

/** Whether an item matches a lower-cased search term (its name): items.list and the records source `items`. */
export const itemMatches = searchIn<ItemDoc>('name_lc');
