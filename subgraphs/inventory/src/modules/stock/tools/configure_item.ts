import { CuadraError, defineTool } from '@cuadra/shared';
import { stockBalances, stockItems } from '../model.ts';
import { stockItem } from '../place.ts';
import { levelStatus } from '../ledger.ts';
import { fromMicro, toMicro } from '../valuation.ts';

const SETTINGS_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['item_id', 'name', 'valuation_method', 'allow_negative_stock', 'reorder_point'],
  properties: { item_id: { type: 'string' }, name: { type: 'string' }, valuation_method: { enum: ['average', 'fifo'] }, allow_negative_stock: { type: 'boolean' }, reorder_point: { type: 'number' } },
} as const;

/** How inventory keeps a product. */
export const configureItem = defineTool({
  name: 'stock.configure_item',
  description: 'Set how a product of the finance catalog is kept in stock: its cost formula (`average`: weighted average, the default; `fifo`: first in, first out — NIIF para pymes §13.18; LIFO is not allowed), whether it may go below zero (default false: a delivery of stock that is not there is refused), and its reorder point (a level at or below it, less reservations, is `low`). The cost formula is fixed once the item has moved.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['item_id'],
    properties: {
      item_id: { type: 'string', minLength: 1, maxLength: 64 },
      valuation_method: { enum: ['average', 'fifo'] },
      allow_negative_stock: { type: 'boolean' },
      reorder_point: { type: 'number', minimum: 0, maximum: 1_000_000_000, multipleOf: 0.000001 },
    },
  },
  output: { type: 'object', additionalProperties: false, required: ['item'], properties: { item: SETTINGS_SCHEMA } },
  async handler(input, ctx) {
    const item = await stockItem(ctx, input.item_id);
    if (input.valuation_method && input.valuation_method !== item.method && item.moved) {
      throw new CuadraError('conflict', `${item.name} has stock movements: its cost formula (${item.method}) is used consistently and cannot change now (NIIF para pymes §13.18).`);
    }
    const set = {
      method: input.valuation_method ?? item.method,
      allow_negative: input.allow_negative_stock ?? item.allow_negative,
      reorder_point: input.reorder_point !== undefined ? toMicro(input.reorder_point) : item.reorder_point,
    };
    await stockItems(ctx.db).updateOne({ _id: item._id }, { $set: set });
    // The balances carry the settings their changes are checked against.
    const balances = stockBalances(ctx.db);
    for (const b of await balances.find({ workspace: ctx.workspace, item_id: item.item_id }, { _id: 1, qty: 1, reserved: 1 }).lean()) {
      await balances.updateOne({ _id: b._id }, { $set: { ...set, status: levelStatus(b.qty, b.reserved, set.reorder_point) } });
    }
    return { item: { item_id: item.item_id, name: item.name, valuation_method: set.method, allow_negative_stock: set.allow_negative, reorder_point: fromMicro(set.reorder_point) } };
  },
});
