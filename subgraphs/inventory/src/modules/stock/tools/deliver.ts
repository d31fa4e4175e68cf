import { defineTool } from '@cuadra/shared';
import { movementIdFor, writeMovement } from '../ledger.ts';
import { MOVEMENT_FIELDS, movementPlace, OUTCOME_SCHEMA, outcomeView, QUANTITY_SCHEMA, REASON_SCHEMA, sourceSchema, withDryRunPreview } from '../place.ts';
import { toMicro } from '../valuation.ts';

/** Goods leaving a warehouse as a sale. */
export const deliver = withDryRunPreview(defineTool({
  name: 'stock.deliver',
  description: 'Deliver goods of a product out of a warehouse for a posted invoice or a sales order (`source`; a sales order\'s reservation is used first; the same source line delivered again answers its first movement and writes nothing). Their cost by the item\'s formula (weighted average, or FIFO layers oldest first) is cost of sales: journal entry debit 6135 costo de ventas, credit 1435 mercancías (and any write-down to NRV they carry leaves 1499). Refused 409 conflict when the stock free in the warehouse (on hand less what other orders reserved) is short and the item does not allow negative stock — atomically: of ten deliveries of the last unit at once, one succeeds. `dry_run: true` answers it without writing.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['item_id', 'warehouse_id', 'quantity'],
    properties: {
      ...MOVEMENT_FIELDS,
      quantity: QUANTITY_SCHEMA,
      source: sourceSchema(['invoice', 'sales_order']),
      reason: REASON_SCHEMA,
    },
  },
  output: OUTCOME_SCHEMA,
  async handler(input, ctx) {
    const { date, dryRun, place } = await movementPlace(ctx, input);
    const outcome = await writeMovement(ctx.db, ctx.graph, place, {
      type: 'delivery', date, qty: -toMicro(input.quantity), source: input.source ?? null, reason: input.reason ?? null,
      salesOrder: input.source?.kind === 'sales_order' ? input.source.id : null,
      ...(input.source ? { id: movementIdFor(ctx.workspace, 'delivery', input.item_id, input.warehouse_id, input.source) } : {}),
    }, { now: ctx.now, dryRun });
    return outcomeView(outcome);
  },
}));
