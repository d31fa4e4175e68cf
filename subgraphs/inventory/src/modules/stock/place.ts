import { CuadraError, DATE_SCHEMA, workspaceToday, type Tool, type ToolContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { readItem } from '../../lib/finance.ts';
import { warehouses } from '../warehouses/model.ts';
import { ensureBalance, newBalance, type MovementOutcome } from './ledger.ts';
import { balanceId, stockBalances, stockItems, type BalanceDoc, type MovementDoc, type StockItemDoc } from './model.ts';
import { fromMicro, share, QTY_SCALE } from './valuation.ts';

/** A quantity of an item's unit: positive, up to 6 decimals, ≤ 10^9 (CONTRACT §9). */
export const QUANTITY_SCHEMA = { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000, multipleOf: 0.000001 } as const;
/** A money amount in minor units. */
export const AMOUNT_SCHEMA = { type: 'integer', minimum: 0, maximum: 1_000_000_000_000_000 } as const;
/** An id of another service's record. */
const REF = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** The common inputs of a movement. */
export const MOVEMENT_FIELDS = {
  item_id: { ...REF, description: 'A product of the finance catalog (items, kind product).' },
  warehouse_id: REF,
  date: { ...DATE_SCHEMA, description: 'The day the goods moved (default today, in the workspace\'s calendar). An earlier day than the latest movement of the item in the warehouse revalues what follows it.' },
  dry_run: { type: 'boolean', description: 'true: answer the movement, the later movements it would revalue and the change in cost of sales, and write nothing.' },
} as const;

/** Why a movement was made, as a person writes it. */
export const REASON_SCHEMA = { type: 'string', minLength: 1, maxLength: 300 } as const;

/** The document a movement comes from (the same line again answers its first movement): of the given kinds. */
export function sourceSchema<K extends string>(kinds: readonly K[]) {
  return {
    type: 'object', additionalProperties: false, required: ['kind', 'id'],
    properties: { kind: { enum: kinds }, id: REF, line: { type: 'integer', minimum: 0, maximum: 999 } },
  } as const;
}

/** The day a movement is dated: the given one, never after today (CONTRACT §10), else today. */
export function movementDate(ctx: ToolContext, date: string | undefined): string {
  const today = workspaceToday(ctx.principal, ctx.now);
  if (date && date > today) throw new CuadraError('invalid_input', `The movement is dated ${date}, after today (${today} in the workspace's calendar).`, { field: '/date' });
  return date ?? today;
}

/** How inventory keeps an item: its settings, made from finance's item on first use (a service is refused at `field`). */
export async function stockItem(ctx: ToolContext, itemId: string, field = '/item_id', opts: { dryRun?: boolean } = {}): Promise<StockItemDoc> {
  const model = stockItems(ctx.db);
  const _id = `${ctx.workspace}|${itemId}`;
  const found = await model.findOne({ _id }).lean<StockItemDoc>();
  if (found) return found;
  const item = await readItem(ctx.graph, itemId);
  if (!item) throw new CuadraError('invalid_input', `No item ${itemId} in the workspace's catalog.`, { field });
  if (item.kind !== 'product') throw new CuadraError('invalid_input', `${item.name} is a service: only products are kept in stock.`, { field });
  const doc: StockItemDoc = { _id, workspace: ctx.workspace, item_id: item.id, name: item.name, sku: item.sku, unit: item.unit, currency: item.currency, method: 'average', allow_negative: false, reorder_point: 0, moved: false, created_at: ctx.now };
  // A dry run writes nothing: the item is answered as the settings it would be kept with.
  if (opts.dryRun) return doc;
  await model.create(doc).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  return (await model.findOne({ _id }).lean<StockItemDoc>())!;
}

/** The balance of an item in a warehouse, made on first use; the warehouse refused at `field` when it is not the workspace's. */
/**
 * A stock tool with its `X-Dry-Run` preview (issue 39): the tool's own handler with `dry_run: true`
 * — the very path the real call runs (the balance read, the movement and the journal lines it would
 * carry, the later movements it would revalue, the closed-month and stock refusals), which writes
 * nothing — so the header and the `dry_run` input answer alike, and a held movement shows the
 * person deciding what it would do.
 */
export function withDryRunPreview<T extends Tool<any, any>>(tool: T): T {
  return { ...tool, preview: (input: Record<string, unknown>, ctx: ToolContext) => tool.handler({ ...input, dry_run: true }, ctx) };
}

/** A single-warehouse movement's date, dry-run flag and balance, as every such tool starts. */
export async function movementPlace(ctx: ToolContext, input: { item_id: string; warehouse_id: string; date?: string; dry_run?: boolean }) {
  const dryRun = input.dry_run === true;
  const date = movementDate(ctx, input.date);
  return { date, dryRun, place: await balanceFor(ctx, input.item_id, input.warehouse_id, { dryRun }) };
}

export async function balanceFor(ctx: ToolContext, itemId: string, warehouseId: string, opts: { field?: string; dryRun?: boolean } = {}): Promise<{ _id: string; workspace: string; item: StockItemDoc; initial?: BalanceDoc }> {
  const wh = await warehouses(ctx.db).findOne({ _id: warehouseId, workspace: ctx.workspace }).lean();
  if (!wh) throw new CuadraError('invalid_input', `No warehouse ${warehouseId} in the workspace.`, { field: opts.field ?? '/warehouse_id' });
  const item = await stockItem(ctx, itemId, undefined, { dryRun: opts.dryRun });
  const _id = balanceId(ctx.workspace, itemId, warehouseId);
  const init = {
    workspace: ctx.workspace, item_id: itemId, item_name: item.name, item_sku: item.sku, unit: item.unit, warehouse_id: warehouseId, warehouse_code: wh.code,
    method: item.method, allow_negative: item.allow_negative, reorder_point: item.reorder_point, currency: item.currency, created_at: ctx.now,
  };
  // A dry run writes nothing: a balance that does not exist yet is answered as the empty one it would be.
  if (opts.dryRun) return { _id, workspace: ctx.workspace, item, initial: newBalance(init) };
  await ensureBalance(ctx.db, init);
  if (!item.moved) await stockItems(ctx.db).updateOne({ _id: item._id }, { $set: { moved: true } });
  return { _id, workspace: ctx.workspace, item };
}

/** The value of goods found (a surplus): at the balance's current unit cost, else its last receipt's; null when it has none. */
export async function surplusValue(db: Connection, balance: string, qty: number, initial?: BalanceDoc): Promise<number | null> {
  const b = (await stockBalances(db).findOne({ _id: balance }).lean<BalanceDoc>()) ?? initial;
  const basis = b && b.qty > 0 ? { qty: b.qty, value: b.value } : b?.last_in;
  return basis ? share(basis.value, qty, basis.qty) : null;
}

/** JSON Schema of {@link movementView}. */
export const MOVEMENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'type', 'item_id', 'warehouse_id', 'date', 'quantity', 'unit_cost', 'value', 'currency', 'on_hand_after', 'value_after', 'source', 'reason', 'journal_entry'],
  properties: {
    id: { type: 'string' }, type: { type: 'string' }, item_id: { type: 'string' }, warehouse_id: { type: 'string' }, date: { type: 'string' },
    quantity: { type: 'number', description: 'Signed: in +, out −.' },
    unit_cost: { type: ['integer', 'null'], description: 'Minor units per unit (rounded), null for a movement of value only.' },
    value: { type: 'integer', description: 'Signed change of the carrying amount, minor units.' },
    currency: { type: 'string' }, on_hand_after: { type: 'number' }, value_after: { type: 'integer' },
    source: { type: ['object', 'null'] }, reason: { type: ['string', 'null'] }, counterpart: { type: ['string', 'null'] },
    price: { type: 'integer', description: 'A purchase return: what the vendor\'s credit note takes off 1435 for these goods (they left at `value`; the difference is in its journal entry).' },
    journal_entry: { type: ['object', 'null'], description: 'The entry finance takes in for it ({id, date, memo, lines}), null when it posts nothing.' },
    restated: { type: ['object', 'null'] }, restates: { type: 'array' },
  },
} as const;

/** The public shape of a movement. */
export function movementView(m: MovementDoc) {
  return {
    id: m._id, type: m.type, item_id: m.item_id, warehouse_id: m.warehouse_id, date: m.date, quantity: fromMicro(m.qty),
    unit_cost: m.qty === 0 ? null : share(Math.abs(m.value), QTY_SCALE, Math.abs(m.qty)), value: m.value, currency: m.currency,
    on_hand_after: fromMicro(m.after.qty), value_after: m.after.value, source: m.source, reason: m.reason, counterpart: m.counterpart ?? null,
    ...(m.price !== undefined ? { price: m.price } : {}), journal_entry: m.journal, restated: m.restated ?? null, ...(m.restates ? { restates: m.restates } : {}),
  };
}

/** JSON Schema of what a movement tool answers. */
export const OUTCOME_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['movement', 'affected', 'cost_of_sales_change', 'revaluations', 'replayed', 'dry_run'],
  properties: {
    movement: MOVEMENT_VIEW_SCHEMA,
    affected: { type: 'array', description: 'Later movements a backdated one revalues: {id, date, type, old_value, new_value}.', items: { type: 'object' } },
    cost_of_sales_change: { type: 'integer', description: 'Change in cost of sales of the revalued deliveries, minor units (+ costs more).' },
    revaluations: { type: 'array', items: { type: 'string' }, description: 'The revaluation movements (one per month touched) that carry the journal entries of the difference.' },
    replayed: { type: 'boolean', description: 'The same source document was already written: this is its movement, nothing new was done.' },
    dry_run: { type: 'boolean' },
  },
} as const;

/** The public shape of a movement tool's answer. */
export function outcomeView(o: MovementOutcome) {
  return { movement: movementView(o.movement), affected: o.affected, cost_of_sales_change: o.cost_of_sales_change, revaluations: o.revaluations, replayed: o.replayed, dry_run: o.dry_run };
}
