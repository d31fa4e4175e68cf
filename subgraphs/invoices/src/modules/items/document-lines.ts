import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { CustomerSnapshot, InvoiceLine } from '../../lib/fiscal-document.ts';
import { items } from './model.ts';
import { documentWithholdings, sumAmounts, WITHHOLDING_RATE_SCHEMA, WITHHOLDING_TYPES, type WithholdingAmount, type WithholdingRate } from '../../lib/money.ts';
import { QUANTITY_SCHEMA } from '@cuadra/shared';
import { checkTags, LINE_TAGS_SCHEMA } from '../dimensions/model.ts';
import { WITHHOLDING_CONCEPT_SCHEMA, type WithholdingConceptKey } from '../../accounting/withholdings.ts';
import {
  documentAmounts, LINE_CHARGES_SCHEMA, priceDocumentAllowanceCharges, priceLine, type DocumentAllowanceCharge, type DocumentAllowanceChargeInput, type LineChargeInput,
} from '../../lib/line-model.ts';
import { LINE_VAT_FIELDS, lineVat, regimeContext, type RegimeContext, type VatCategory } from '../../lib/tax-regime.ts';
import { WAREHOUSE_ID_SCHEMA, type StockLine } from '../../open-items/stock.ts';
import type { Connection } from 'mongoose';

/** A line as callers write it (invoices, quotes, sales orders). */
export interface LineInput {
  item_id?: string;
  warehouse_id?: string;
  description?: string;
  quantity: number;
  unit?: string;
  unit_price?: number;
  discount_bps?: number;
  charges?: LineChargeInput[];
  tax_rate_ppm?: number;
  tax_category?: VatCategory;
  tax_exemption_reason?: string;
  tax_exemption_reason_code?: string;
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
    warehouse_id: WAREHOUSE_ID_SCHEMA,
    description: { type: 'string', minLength: 1, maxLength: 500 },
    quantity: QUANTITY_SCHEMA,
    unit: { type: 'string', pattern: '^[A-Z0-9]{2,3}$' },
    unit_price: { type: 'integer', minimum: 0, maximum: 1e15 },
    discount_bps: { type: 'integer', minimum: 0, maximum: 10000, description: 'Discount in basis points of quantity × price: the line\'s allowance (cac:AllowanceCharge).' },
    charges: LINE_CHARGES_SCHEMA,
    tax_rate_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'VAT in parts per million. Colombia: 190000 (19 %), 50000 (5 %) or 0; elsewhere the country\'s rate, with its EN 16931 category.' },
    ...LINE_VAT_FIELDS,
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
  const data = await ctx.graph('crm', 'query($id: ID!) { party(id: $id) { id kind name status email phone taxIdentity { type number checkDigit } fiscal { personType legalName responsibilities taxScheme address { line municipalityCode postalCode country } } } }', { id: customerId })
    .catch((err: unknown) => {
      if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
      throw err;
    });
  const party = data.party as {
    kind: string; name: string; status: string; email: string | null; phone: string | null; taxIdentity: { type: string; number: string; checkDigit: number | null } | null;
    fiscal: { personType: 'legal' | 'natural'; legalName: string | null; responsibilities: string[]; taxScheme: string; address: { line: string; municipalityCode: string | null; postalCode: string | null; country: string } | null } | null;
  } | null;
  if (!party) throw new CuadraError('invalid_input', `No party ${customerId} exists in this workspace.`, { field });
  if (party.kind === 'vendor') throw new CuadraError('invalid_input', `${party.name} is a vendor, not a customer: make it a customer (kind both) to sell to it.`, { field });
  if (party.status === 'archived' && !options.archived) throw new CuadraError('conflict', `${party.name} is archived; it can no longer be sold to.`);
  return {
    name: party.name,
    tax_id: party.taxIdentity ? { type: party.taxIdentity.type, number: party.taxIdentity.number, check_digit: party.taxIdentity.checkDigit ?? null } : null,
    email: party.email ?? null,
    phone: party.phone ?? null,
    fiscal: party.fiscal ? {
      person_type: party.fiscal.personType, legal_name: party.fiscal.legalName, responsibilities: party.fiscal.responsibilities, tax_scheme: party.fiscal.taxScheme,
      address: party.fiscal.address ? { line: party.fiscal.address.line, municipality_code: party.fiscal.address.municipalityCode, postal_code: party.fiscal.address.postalCode, country: party.fiscal.address.country } : null,
    } : null,
  };
}

/**
 * Turns input lines into stored lines: catalog items fill what the line leaves out (price,
 * description, VAT, unit); amounts are computed here by the line model (lib/line-model.ts), never
 * taken from the caller; each line's VAT is checked against the workspace's tax regime
 * (lib/tax-regime.ts). `fieldBase` is the JSON Pointer of the lines array, for refusals.
 */
export async function buildLines(ctx: Pick<ToolContext, 'db' | 'workspace' | 'principal'>, currency: string, input: readonly LineInput[], fieldBase = '/lines', regime?: RegimeContext): Promise<InvoiceLine[]> {
  const { db, workspace } = ctx;
  const rc = regime ?? await regimeContext(db, workspace, ctx.principal);
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
    if (l.warehouse_id && item?.kind !== 'product') throw new CuadraError('invalid_input', 'Only a line of a product item takes a warehouse: a service or a line without item moves no stock.', { field: `${fieldBase}/${index}/warehouse_id` });
    const description = l.description ?? item?.name;
    if (!description) throw new CuadraError('invalid_input', 'A line without an item needs a description.', { field: `${fieldBase}/${index}/description` });
    const unitPrice = l.unit_price ?? item?.price;
    if (unitPrice === undefined) throw new CuadraError('invalid_input', 'A line without an item needs a unit_price.', { field: `${fieldBase}/${index}/unit_price` });
    const discount = l.discount_bps ?? 0;
    const rate = l.tax_rate_ppm ?? item?.tax_rate_ppm ?? (rc.regime === 'dian' ? 190000 : undefined);
    if (rate === undefined) throw new CuadraError('invalid_input', 'A line without an item needs its VAT rate (tax_rate_ppm).', { field: `${fieldBase}/${index}/tax_rate_ppm` });
    const vat = lineVat(rc, { ...l, tax_rate_ppm: rate }, `${fieldBase}/${index}`);
    return {
      item_id: item?._id ?? null, ...(l.warehouse_id ? { warehouse_id: l.warehouse_id } : {}), description, quantity: l.quantity, unit: l.unit ?? item?.unit ?? '94', unit_price: unitPrice,
      discount_bps: discount, tax_rate_ppm: rate, withholdings: l.withholdings ?? [], ...priceLine(l.quantity, unitPrice, discount, l.charges ?? [], rate, `${fieldBase}/${index}`),
      ...(vat ? { vat } : {}),
      ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}),
      withholding_concept: l.withholding_concept ?? item?.withholding_concept ?? (item?.kind === 'product' ? 'compras' : 'servicios'),
    };
  });
}

/** The stored totals of a document (documentTotals). */
export interface DocumentTotals {
  subtotal: number;
  allowance_charges: DocumentAllowanceCharge[];
  allowance_total: number;
  charge_total: number;
  tax_total: number;
  total: number;
  withholdings: WithholdingAmount[];
  withholding_total: number;
  amount_due: number;
}

/**
 * Totals of a document from its stored lines, its document-level allowances and charges (already
 * priced: priceDocumentAllowanceCharges) and its withholding rates, by the line model
 * (lib/line-model.ts documentAmounts). Every sum stays within ±10^15 minor units, or the input is
 * refused naming the line (or the allowance/charge) that takes it out of range.
 */
export function documentTotals(lines: readonly InvoiceLine[], withholdingRates: readonly WithholdingRate[], allowanceCharges: readonly DocumentAllowanceCharge[] = [], fieldBase = '/lines'): DocumentTotals {
  const at = (i: number) => `${fieldBase}/${i}`;
  sumAmounts(lines.map((l) => l.subtotal), at, 'The document subtotal');
  sumAmounts(lines.map((l) => l.total), at, 'The document total');
  sumAmounts(allowanceCharges.map((a) => a.amount), (i) => `/allowance_charges/${i}`, 'The allowances and charges');
  const amounts = documentAmounts(lines, allowanceCharges);
  sumAmounts([amounts.line_extension, amounts.tax_total, amounts.charge_total], () => '/allowance_charges', 'The document total');
  if (amounts.payable < 0) throw new CuadraError('invalid_input', 'The document\'s allowances take its total below zero.', { field: '/allowance_charges' });
  const withholdings = documentWithholdings(lines, withholdingRates, fieldBase);
  const withholdingTotal = sumAmounts(withholdings.map((w) => w.amount), () => fieldBase, 'The withholding total');
  return {
    subtotal: amounts.line_extension, allowance_charges: [...allowanceCharges], allowance_total: amounts.allowance_total, charge_total: amounts.charge_total,
    tax_total: amounts.tax_total, total: amounts.payable, withholdings, withholding_total: withholdingTotal, amount_due: amounts.payable - withholdingTotal,
  };
}

/**
 * A document's allowances and charges as given, priced on its line total and checked against the
 * regime: in Colombia they do not change the VAT base (DIAN: PayableAmount = TaxInclusiveAmount −
 * AllowanceTotalAmount + ChargeTotalAmount, FAU14), so they carry no VAT; elsewhere they carry the
 * VAT rate given (EN 16931 BG-20/BG-21, each with its category in the VAT breakdown).
 */
export function documentAllowanceCharges(rc: RegimeContext, lines: readonly InvoiceLine[], input: readonly DocumentAllowanceChargeInput[] | undefined, field = '/allowance_charges'): DocumentAllowanceCharge[] {
  if (!input?.length) return [];
  const rates = new Set(lines.map((l) => l.tax_rate_ppm));
  const checked = input.map((a, i) => {
    const at = `${field}/${i}`;
    if (rc.regime === 'dian') {
      if ((a.tax_rate_ppm ?? 0) !== 0) {
        throw new CuadraError('invalid_input', 'In Colombia an allowance or charge of the whole document does not change the VAT base (Anexo Técnico 1.9, FAU14); charge VAT on a line instead.', { field: `${at}/tax_rate_ppm` });
      }
      for (const key of ['tax_category', 'tax_exemption_reason', 'tax_exemption_reason_code'] as const) {
        if (a[key] !== undefined) throw new CuadraError('invalid_input', 'VAT categories are EN 16931\'s; in Colombia a document allowance or charge carries no VAT.', { field: `${at}/${key}` });
      }
      return { ...a, tax_rate_ppm: 0 };
    }
    // EN 16931: each carries a VAT category and rate (BR-32, BR-37); one rate on every line is the default.
    const rate = a.tax_rate_ppm ?? (rates.size === 1 ? [...rates][0] : undefined);
    if (rate === undefined) throw new CuadraError('invalid_input', 'The lines carry different VAT rates: give this allowance or charge its own (tax_rate_ppm).', { field: `${at}/tax_rate_ppm` });
    return { ...a, tax_rate_ppm: rate, vat: lineVat(rc, { ...a, tax_rate_ppm: rate }, at) };
  });
  return priceDocumentAllowanceCharges(lines.reduce((s, l) => s + l.subtotal, 0), checked, field);
}

/** The lines of product items (the only ones inventory stocks) as stock lines, with their warehouse (null: the default). */
export async function productLines(db: Connection, workspace: string, lines: readonly { item_id?: string | null; warehouse_id?: string | null; quantity: number; subtotal: number; invoice_line?: number }[]): Promise<StockLine[]> {
  const ids = [...new Set(lines.flatMap((l) => (l.item_id ? [l.item_id] : [])))];
  const products = new Set(ids.length ? (await items(db).find({ _id: { $in: ids }, workspace, kind: 'product' }, { _id: 1 }).lean()).map((i) => i._id) : []);
  return lines.flatMap((l, line) => (l.item_id && products.has(l.item_id)
    ? [{ line, item_id: l.item_id, warehouse_id: l.warehouse_id ?? null, quantity: l.quantity, value: l.subtotal, ...(l.invoice_line !== undefined ? { invoice_line: l.invoice_line } : {}) }]
    : []));
}
