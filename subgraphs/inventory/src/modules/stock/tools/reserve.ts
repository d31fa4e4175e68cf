import { CuadraError, defineTool, type ToolContext } from '@cuadra/shared';
import { finishPending, levelStatus } from '../ledger.ts';
import { stockBalances, type BalanceDoc } from '../model.ts';
import { balanceFor, QUANTITY_SCHEMA } from '../place.ts';
import { fromMicro, toMicro } from '../valuation.ts';

const LEVEL_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['item_id', 'warehouse_id', 'on_hand', 'reserved', 'available', 'status'],
  properties: { item_id: { type: 'string' }, warehouse_id: { type: 'string' }, on_hand: { type: 'number' }, reserved: { type: 'number' }, available: { type: 'number' }, status: { enum: ['ok', 'low'] } },
} as const;

/** Sets a sales order's reservation of an item in a warehouse (0 releases it), with one compare-and-set on the balance. */
export async function setReservation(ctx: ToolContext, input: { sales_order_id: string; item_id: string; warehouse_id: string }, to: (current: number, b: BalanceDoc) => number) {
  const place = await balanceFor(ctx, input.item_id, input.warehouse_id);
  const balances = stockBalances(ctx.db);
  for (let attempt = 0; attempt < 500; attempt++) {
    await finishPending(ctx.db, ctx.graph, place._id, ctx.now);
    const b = (await balances.findOne({ _id: place._id }).lean<BalanceDoc>())!;
    const current = b.reservations?.[input.sales_order_id] ?? 0;
    const next = to(current, b);
    const reserved = b.reserved - current + next;
    const reservations = { ...(b.reservations ?? {}) };
    if (next > 0) reservations[input.sales_order_id] = next; else delete reservations[input.sales_order_id];
    const won = await balances.updateOne({ _id: b._id, version: b.version }, { $set: { reserved, reservations, version: b.version + 1, status: levelStatus(b.qty, reserved, b.reorder_point) } });
    if (won.modifiedCount === 1) {
      return { level: { item_id: b.item_id, warehouse_id: b.warehouse_id, on_hand: fromMicro(b.qty), reserved: fromMicro(reserved), available: fromMicro(b.qty - reserved), status: levelStatus(b.qty, reserved, b.reorder_point) } };
    }
    if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(40, attempt * 2)));
  }
  throw new CuadraError('unavailable', 'The stock of this item changed too often to reserve it; nothing was done. Try again.', { beforeAnyEffect: true });
}

const ORDER = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** A sales order reserves stock. */
export const reserve = defineTool({
  name: 'stock.reserve',
  description: 'Reserve a quantity of a product in a warehouse for a sales order (the order\'s reservation becomes this quantity): reserved stock is on hand but not available to other deliveries, and a delivery with that sales order as its source uses it first. Refused 409 conflict when the available stock (on hand less other reservations) is short and the item does not allow negative stock.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['sales_order_id', 'item_id', 'warehouse_id', 'quantity'], properties: { sales_order_id: ORDER, item_id: ORDER, warehouse_id: ORDER, quantity: QUANTITY_SCHEMA } },
  output: { type: 'object', additionalProperties: false, required: ['level'], properties: { level: LEVEL_SCHEMA } },
  async handler(input, ctx) {
    const want = toMicro(input.quantity);
    return setReservation(ctx, input, (current, b) => {
      const free = b.qty - (b.reserved - current);
      if (!b.allow_negative && want > free) throw new CuadraError('conflict', `Only ${fromMicro(Math.max(free, 0))} ${b.unit} of ${b.item_name} are available in ${b.warehouse_code}; ${input.quantity} cannot be reserved.`);
      return want;
    });
  },
});

/** A sales order gives its reservation back. */
export const release = defineTool({
  name: 'stock.release',
  description: 'Release what a sales order reserved of a product in a warehouse (a cancelled or changed order).',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['sales_order_id', 'item_id', 'warehouse_id'], properties: { sales_order_id: ORDER, item_id: ORDER, warehouse_id: ORDER } },
  output: { type: 'object', additionalProperties: false, required: ['level'], properties: { level: LEVEL_SCHEMA } },
  async handler(input, ctx) {
    return setReservation(ctx, input, () => 0);
  },
});
