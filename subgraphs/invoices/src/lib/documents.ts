import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import type { CustomerSnapshot, InvoiceLine } from '../modules/invoices/model.ts';
import { items } from '../modules/items/model.ts';
import { documentWithholdings, lineAmounts, sumAmounts, VAT_RATES_PPM, WITHHOLDING_RATE_SCHEMA, WITHHOLDING_TYPES, type WithholdingAmount, type WithholdingRate } from './money.ts';
import { QUANTITY_SCHEMA } from '@cuadra/shared';
import { checkTags, LINE_TAGS_SCHEMA } from '../modules/dimensions/model.ts';
import { WITHHOLDING_CONCEPT_SCHEMA, type WithholdingConceptKey } from '../accounting/withholdings.ts';

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
  tags?: Record<string, string>;
  withholding_concept?: WithholdingConceptKey;
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
    tags: LINE_TAGS_SCHEMA,
    withholding_concept: { ...WITHHOLDING_CONCEPT_SCHEMA, description: `${WITHHOLDING_CONCEPT_SCHEMA.description} Default: the item's, else servicios for a service or a line without item, compras for a product.` },
  },
  // A line without a catalog item says what it is and what it costs.
  if: { not: { properties: { item_id: true }, required: ['item_id'] } },
  then: { properties: { description: true, unit_price: true }, required: ['description', 'unit_price'] },
} as const;

/**
 * The buyer of a document as crm knows the party, read through the graph (never typed again by
 * the caller): its real name, tax identification and e-mail go on the document and the e-invoice.
 * A party that does not exist in the workspace is refused naming `field`; a vendor-only or archived
 * party cannot be sold to. crm not answering is `unavailable`: nothing has been written yet.
 */
export async function buyerFromCrm(ctx: Pick<ToolContext, 'graph'>, customerId: string, options: { field?: string; archived?: boolean } = {}): Promise<CustomerSnapshot> {
  const field = options.field ?? '/customer_id';
  if (!ctx.graph) throw new CuadraError('unavailable', 'The crm service is not configured here; nothing was done.', { beforeAnyEffect: true });
  // Every caller looks the buyer up before it writes anything: crm not answering is a clean `unavailable`.
  const data = await ctx.graph('crm', 'query($id: ID!) { party(id: $id) { id kind name status email taxIdentity { type number checkDigit } } }', { id: customerId })
    .catch((err: unknown) => {
      if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
      throw err;
    });
  const party = data.party as { kind: string; name: string; status: string; email: string | null; taxIdentity: { type: string; number: string; checkDigit: number | null } | null } | null;
  if (!party) throw new CuadraError('invalid_input', `No party ${customerId} exists in this workspace.`, { field });
  if (party.kind === 'vendor') throw new CuadraError('invalid_input', `${party.name} is a vendor, not a customer: make it a customer (kind both) to sell to it.`, { field });
  if (party.status === 'archived' && !options.archived) throw new CuadraError('conflict', `${party.name} is archived; it can no longer be sold to.`);
  return {
    name: party.name,
    tax_id: party.taxIdentity ? { type: party.taxIdentity.type, number: party.taxIdentity.number, check_digit: party.taxIdentity.checkDigit ?? null } : null,
    email: party.email ?? null,
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
  for (const [index, l] of input.entries()) if (l.tags) await checkTags(db, workspace, l.tags, `${fieldBase}/${index}/tags`);
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
      ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}),
      withholding_concept: l.withholding_concept ?? item?.withholding_concept ?? (item?.kind === 'product' ? 'compras' : 'servicios'),
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
