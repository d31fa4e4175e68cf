import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import type { CustomerSnapshot, InvoiceLine } from './models/invoice.ts';
import { items } from './models/item.ts';
import { documentWithholdings, lineAmounts, sumAmounts, VAT_RATES_PPM, WITHHOLDING_RATE_SCHEMA, WITHHOLDING_TYPES, type WithholdingAmount, type WithholdingRate } from './money.ts';
import { QUANTITY_SCHEMA } from '@cuadra/shared';

/** A line as callers write it (invoices, quotes, sales orders). */
export interface LineInput {
  item_id?: string;
  description?: string;
  quantity: number;
  unit?: string;
  unit_price?: number;
  discount_bps?: number;
  tax_rate_ppm?: number;
  withholdings?: WithholdingRate[];
}

/** JSON Schema of withholding rates. */
export const withholdingsSchema = {
  type: 'array',
  maxItems: 3,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'rate_ppm'],
    properties: {
      type: { enum: [...WITHHOLDING_TYPES] },
      rate_ppm: WITHHOLDING_RATE_SCHEMA,
    },
  },
} as const;

/** JSON Schema of a document line. */
export const lineSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['quantity'],
  properties: {
    item_id: { type: 'string', pattern: '^itm_[A-Za-z0-9_-]{1,40}$' },
    description: { type: 'string', minLength: 1, maxLength: 500 },
    quantity: QUANTITY_SCHEMA,
    unit: { type: 'string', pattern: '^[A-Z0-9]{2,3}$' },
    unit_price: { type: 'integer', minimum: 0, maximum: 1e15 },
    discount_bps: { type: 'integer', minimum: 0, maximum: 10000 },
    tax_rate_ppm: { enum: [...VAT_RATES_PPM], description: 'VAT in parts per million: 190000 (19 %), 50000 (5 %) or 0.' },
    withholdings: withholdingsSchema,
  },
} as const;

/** JSON Schema of the buyer snapshot. */
export const customerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  description: 'The buyer as it must appear on the document (the crm party, as the caller read it). Without tax_id the buyer is a final consumer (222222222222).',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    tax_id: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'number'],
      properties: {
        type: { enum: ['NIT', 'CC', 'CE', 'PASSPORT', 'FOREIGN'] },
        number: { type: 'string', pattern: '^[0-9A-Za-z]{3,20}$' },
        check_digit: { type: 'integer', minimum: 0, maximum: 9 },
      },
    },
    email: { type: 'string', format: 'email', maxLength: 254 },
  },
} as const;

/** The stored buyer snapshot from the caller's input. */
export function customerSnapshot(input: { name: string; tax_id?: { type: string; number: string; check_digit?: number }; email?: string } | undefined, fallbackName: string): CustomerSnapshot {
  if (!input) return { name: fallbackName, tax_id: null, email: null };
  return {
    name: input.name.trim(),
    tax_id: input.tax_id ? { type: input.tax_id.type, number: input.tax_id.number, check_digit: input.tax_id.check_digit ?? null } : null,
    email: input.email ?? null,
  };
}

/**
 * Turns input lines into stored lines: catalog items fill what the line leaves out (price,
 * description, VAT, unit); amounts are computed here, never taken from the caller.
 * `fieldBase` is the JSON Pointer of the lines array, for refusals.
 */
export async function buildLines(db: Connection, workspace: string, currency: string, input: readonly LineInput[], fieldBase = '/lines'): Promise<InvoiceLine[]> {
  const itemIds = [...new Set(input.flatMap((l) => (l.item_id ? [l.item_id] : [])))];
  const found = itemIds.length ? await items(db).find({ _id: { $in: itemIds }, workspace }).lean() : [];
  const byId = new Map(found.map((i) => [i._id, i]));
  return input.map((l, index) => {
    const item = l.item_id ? byId.get(l.item_id) : undefined;
    if (l.item_id && !item) throw new CuadraError('not_found', `No item ${l.item_id} exists in this workspace (line ${index}).`);
    if (item && item.status === 'archived') throw new CuadraError('conflict', `Item ${item._id} is archived; it can no longer be sold.`);
    if (item && item.currency !== currency) {
      throw new CuadraError('invalid_input', `Item ${item._id} is priced in ${item.currency}, not ${currency}.`, { field: `${fieldBase}/${index}/item_id` });
    }
    const description = l.description ?? item?.name;
    if (!description) throw new CuadraError('invalid_input', 'A line without an item needs a description.', { field: `${fieldBase}/${index}/description` });
    const unitPrice = l.unit_price ?? item?.price;
    if (unitPrice === undefined) throw new CuadraError('invalid_input', 'A line without an item needs a unit_price.', { field: `${fieldBase}/${index}/unit_price` });
    const discount = l.discount_bps ?? 0;
    const rate = l.tax_rate_ppm ?? item?.tax_rate_ppm ?? 190000;
    return {
      item_id: item?._id ?? null, description, quantity: l.quantity, unit: l.unit ?? item?.unit ?? '94', unit_price: unitPrice,
      discount_bps: discount, tax_rate_ppm: rate, withholdings: l.withholdings ?? [], ...lineAmounts(l.quantity, unitPrice, discount, rate, `${fieldBase}/${index}`),
    };
  });
}

/**
 * Totals of a document from its stored lines and document-level withholding rates. Every sum stays
 * within ±10^15 minor units, or the input is refused naming the line that takes it out of range.
 */
export function documentTotals(lines: readonly InvoiceLine[], withholdingRates: readonly WithholdingRate[], fieldBase = '/lines'): {
  subtotal: number; tax_total: number; total: number; withholdings: WithholdingAmount[]; withholding_total: number; amount_due: number;
} {
  const at = (i: number) => `${fieldBase}/${i}`;
  const subtotal = sumAmounts(lines.map((l) => l.subtotal), at, 'The document subtotal');
  const taxTotal = sumAmounts(lines.map((l) => l.tax), at, 'The document VAT');
  const total = sumAmounts(lines.map((l) => l.total), at, 'The document total');
  const withholdings = documentWithholdings(lines, withholdingRates, fieldBase);
  const withholdingTotal = sumAmounts(withholdings.map((w) => w.amount), () => fieldBase, 'The withholding total');
  return { subtotal, tax_total: taxTotal, total, withholdings, withholding_total: withholdingTotal, amount_due: total - withholdingTotal };
}
