import { defineTool } from '@cuadra/shared';
import { movementIdFor, writeMovement } from '../ledger.ts';
import { AMOUNT_SCHEMA, MOVEMENT_FIELDS, movementPlace, OUTCOME_SCHEMA, outcomeView, QUANTITY_SCHEMA, REASON_SCHEMA, sourceSchema, withDryRunPreview } from '../place.ts';
import { toMicro } from '../valuation.ts';

/** Goods received into a warehouse. */
export const receive = withDryRunPreview(defineTool({
  name: 'stock.receive',
  description: 'Receive goods of a product into a warehouse at their unit cost (minor units per unit, before VAT): from a purchase order\'s receipt or a bill (`source`; the same source line received again answers its first movement and writes nothing), or by hand. Weighted-average items take it into their average; FIFO items keep it as a cost layer. A receipt posts no journal entry here: the bill charges 1435 mercancías in finance. Dated before the latest movement of the item in the warehouse, it revalues the movements that follow (`dry_run: true` shows them and the change in cost of sales first); refused 409 conflict when a month it changes is closed.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['item_id', 'warehouse_id', 'quantity', 'unit_cost'],
    properties: {
      ...MOVEMENT_FIELDS,
      quantity: QUANTITY_SCHEMA,
      unit_cost: AMOUNT_SCHEMA,
      source: sourceSchema(['bill', 'purchase_order']),
      reason: REASON_SCHEMA,
    },
  },
  output: OUTCOME_SCHEMA,
  async handler(input, ctx) {
    const { date, dryRun, place } = await movementPlace(ctx, input);
    const qty = toMicro(input.quantity);
    const value = Math.round(input.quantity * input.unit_cost);
    const outcome = await writeMovement(ctx.db, ctx.graph, place, {
      type: 'receipt', date, qty, value, source: input.source ?? null, reason: input.reason ?? null,
      ...(input.source ? { id: movementIdFor(ctx.workspace, 'receipt', input.item_id, input.warehouse_id, input.source) } : {}),
    }, { now: ctx.now, dryRun });
    return outcomeView(outcome);
  },
}));
