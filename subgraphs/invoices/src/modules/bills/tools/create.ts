import { addDays, CuadraError, DATE_SCHEMA, defineTool, localDate, newId, repeatableId, QUANTITY_SCHEMA, RATE_PPM_SCHEMA, recordOutput, type InputOf, type ToolContext } from '@cuadra/shared';
import { checkTags, LINE_TAGS_SCHEMA } from '../../dimensions/model.ts';
import { BILL_LINE_ACCOUNT_CODES } from '../../../accounting/payable-accounts.ts';
import { WITHHOLDING_CONCEPT_SCHEMA } from '../../../accounting/withholdings.ts';
import { BILL_VIEW_SCHEMA, BILL_WITHHOLDING_TYPES, billLines, billSearchText, billTotals, billView, supplierKey, vendorFromCrm, type BillDoc, type BillWithholdingRate } from '../model.ts';
import { insertDraftBill } from '../ops.ts';
import { items } from '../../items/model.ts';
import { WAREHOUSE_ID_SCHEMA } from '../../../open-items/stock.ts';

/**
 * A bill line bought for stock names a product item of the catalog and is charged to 1435
 * mercancías (the goods are an asset until sold); a warehouse only on such a line.
 */
export async function checkStockLines(ctx: ToolContext, lines: readonly { item_id?: string; warehouse_id?: string; account: string }[]): Promise<void> {
  const ids = [...new Set(lines.flatMap((l) => (l.item_id ? [l.item_id] : [])))];
  const found = new Map(ids.length ? (await items(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace }, { _id: 1, kind: 1 }).lean()).map((i) => [i._id, i.kind]) : []);
  for (const [i, l] of lines.entries()) {
    if (l.warehouse_id && !l.item_id) throw new CuadraError('invalid_input', 'A warehouse is for a line of a product item (item_id).', { field: `/lines/${i}/warehouse_id` });
    if (!l.item_id) continue;
    if (!found.has(l.item_id)) throw new CuadraError('invalid_input', `No item ${l.item_id} exists in this workspace.`, { field: `/lines/${i}/item_id` });
    if (found.get(l.item_id) !== 'product') throw new CuadraError('invalid_input', `Item ${l.item_id} is a service: only a product is bought for stock.`, { field: `/lines/${i}/item_id` });
    if (l.account !== '1435') throw new CuadraError('invalid_input', 'Goods bought for stock are charged to 1435 mercancías.', { field: `/lines/${i}/account` });
  }
}

/** JSON Schema of a bill line as callers write it. */
const LINE = {
  type: 'object', additionalProperties: false, required: ['description', 'account', 'quantity', 'unit_price'],
  properties: {
    item_id: { type: 'string', pattern: '^itm_[A-Za-z0-9_-]{1,40}$', description: 'A product item of the catalog bought for stock (account 1435): the posted bill receives it into inventory at the line\'s net unit cost.' },
    warehouse_id: WAREHOUSE_ID_SCHEMA,
    description: { type: 'string', minLength: 1, maxLength: 500 },
    account: { enum: BILL_LINE_ACCOUNT_CODES as unknown as readonly ['5110', '5120', '5135', '5145', '5195', '1435', '1524', '1528'], description: 'PUC account charged: 5110 honorarios, 5120 arrendamientos, 5135 servicios, 5145 mantenimiento, 5195 diversos, 1435 mercancías, 1524 equipo de oficina, 1528 equipo de computación.' },
    quantity: QUANTITY_SCHEMA,
    unit_price: { type: 'integer', minimum: 0, maximum: 1e15 },
    discount_bps: { type: 'integer', minimum: 0, maximum: 10000 },
    tax_rate_ppm: { enum: [190000, 50000, 0], description: 'VAT in parts per million: 190000 (19 %), 50000 (5 %) or 0 (default).' },
    tags: LINE_TAGS_SCHEMA,
    withholding_concept: { ...WITHHOLDING_CONCEPT_SCHEMA, description: `${WITHHOLDING_CONCEPT_SCHEMA.description} Default from the account: 5110 honorarios, 5120 arrendamiento_inmuebles, 5135 and 5145 servicios, 5195, 1435, 1524 and 1528 compras.` },
  },
} as const;

/** Fields bills.create and bills.update share. */
export const BILL_FIELDS = {
  vendor_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
  supplier_number: { type: 'string', minLength: 1, maxLength: 60, pattern: '^\\S(.*\\S)?$', description: 'The number printed on the vendor\'s invoice (e.g. FE-1234).' },
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  issue_date: DATE_SCHEMA,
  due_date: DATE_SCHEMA,
  notes: { type: 'string', maxLength: 2000 },
  lines: { type: 'array', minItems: 1, maxItems: 500, items: LINE },
  withholdings: {
    type: 'array', maxItems: 3, uniqueItems: true,
    description: 'Withholdings this business makes on the bill: retefuente per concept of the lines (each line\'s withholding_concept) on the base of that concept\'s lines; reteica on the taxable base, reteiva on the VAT (rates in ppm: 2.5 % = 25000, ReteICA 9.66 ‰ = 9660). Retefuente without rate_ppm takes each concept\'s own 2026 rate, and only where the concept\'s base reaches its minimum in UVT (services 2 UVT, purchases and rent of real estate 10 UVT, Decreto 0572 de 2025); with rate_ppm that rate applies to every concept, whatever the base.',
    items: {
      type: 'object', additionalProperties: false, required: ['type'], properties: { type: { enum: BILL_WITHHOLDING_TYPES }, rate_ppm: RATE_PPM_SCHEMA },
      // ReteIVA and ReteICA have no table here: their rate is always stated.
      if: { properties: { type: { const: 'retefuente' } } }, else: { properties: { rate_ppm: true }, required: ['rate_ppm'] },
    },
  },
} as const;

/** The withholding rates to store: retefuente's rate only when given (absent: by concept from the table). */
export function billRates(input: readonly { type: BillWithholdingRate['type']; rate_ppm?: number }[]): BillWithholdingRate[] {
  return input.map((w) => (w.rate_ppm === undefined ? { type: w.type } : { type: w.type, rate_ppm: w.rate_ppm }));
}

/** One withholding per type: two rates of one type on one bill is a mistake, not a feature. */
export function checkWithholdingTypes(rates: readonly { type: string }[] | undefined): void {
  const seen = new Set<string>();
  rates?.forEach((r, i) => {
    if (seen.has(r.type)) throw new CuadraError('invalid_input', `${r.type} is given twice.`, { field: `/withholdings/${i}/type` });
    seen.add(r.type);
  });
}

const CREATE_INPUT = { type: 'object', additionalProperties: false, required: ['vendor_id', 'supplier_number', 'currency', 'lines'], properties: BILL_FIELDS } as const;

/** What bills.create takes (a purchase order converts into a bill through it). */
export type BillCreateInput = InputOf<typeof CREATE_INPUT>;

/**
 * Records a vendor's bill as a draft: the one path bills.create and purchase_orders.convert take.
 * Amounts are computed here, never taken from the caller; the vendor is read from crm. With `id`
 * the bill gets the caller's id (a conversion chooses it first, so a retry cannot add a second).
 */
export async function createDraftBill(ctx: ToolContext, input: BillCreateInput, id?: string): Promise<BillDoc> {
  checkWithholdingTypes(input.withholdings);
  for (const [i, l] of input.lines.entries()) if (l.tags) await checkTags(ctx.db, ctx.workspace, l.tags, `/lines/${i}/tags`);
  await checkStockLines(ctx, input.lines);
  const lines = billLines(input.lines);
  const issueDate = input.issue_date ?? localDate(ctx.now);
  const dueDate = input.due_date ?? addDays(issueDate, 30);
  if (dueDate < issueDate) throw new CuadraError('invalid_input', 'The due date cannot be before the issue date.', { field: '/due_date' });
  const rates = billRates(input.withholdings ?? []);
  const totals = billTotals(lines, rates, issueDate);
  const vendor = await vendorFromCrm(ctx, input.vendor_id);
  const totalsDoc = { ...totals, paid: 0, balance: totals.amount_due };
  const doc: BillDoc = {
    // The caller's id, or the same one in every attempt of a call that can run again (repeatableId, runs.ts).
    _id: id ?? repeatableId('bil') ?? newId('bil'), workspace: ctx.workspace, status: 'draft', vendor_id: input.vendor_id, vendor, supplier_number: input.supplier_number,
    supplier_key: supplierKey(ctx.workspace, input.vendor_id, input.supplier_number), search_lc: billSearchText(input.supplier_number, vendor.name),
    currency: input.currency, issue_date: issueDate, due_date: dueDate, lines, withholding_rates: rates, ...totalsDoc, settlements: [], closed_on: null,
    journal_entry_id: null, posting: null, rev: 0, pending_rollups: [], pending_count: 0, notes: input.notes ?? null, posted_at: null,
    created_at: ctx.now, updated_at: ctx.now,
  };
  return insertDraftBill(ctx, doc);
}

/** Records a vendor's bill as a draft; amounts are computed here, never taken from the caller. */
export const create = defineTool({
  name: 'bills.create',
  description: 'Record a vendor\'s bill as a draft: the vendor (a crm party of kind vendor or both), its invoice number, dates, lines charged to PUC expense or asset accounts with quantity, unit price in cents, discount and VAT, and the withholdings made (retefuente, ReteIVA, ReteICA). Totals are computed. One bill per vendor invoice number.',
  risk: 'write',
  input: CREATE_INPUT,
  output: recordOutput('bill', BILL_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { bill: billView(await createDraftBill(ctx, input)) };
  },
});
