import { CuadraError, defineTool } from '@cuadra/shared';
import { writeMovement } from '../ledger.ts';
import { AMOUNT_SCHEMA, MOVEMENT_FIELDS, movementPlace, OUTCOME_SCHEMA, outcomeView, REASON_SCHEMA, surplusValue, withDryRunPreview } from '../place.ts';
import { toMicro } from '../valuation.ts';

/** A correction of the stock on hand, with its reason. */
export const adjust = withDryRunPreview(defineTool({
  name: 'stock.adjust',
  description: 'Correct the stock of a product in a warehouse by a signed quantity, with a reason (breakage, theft, an opening balance…). Goods added come in at `unit_cost` (default: the item\'s current unit cost there); goods taken out leave at their cost by the item\'s formula. Journal entry: a shortage debits 5295 diversos and credits 1435; a surplus debits 1435 and credits 4250 recuperaciones. Refused 409 conflict when it would leave negative stock and the item does not allow it.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['item_id', 'warehouse_id', 'quantity', 'reason'],
    properties: {
      ...MOVEMENT_FIELDS,
      quantity: { type: 'number', minimum: -1_000_000_000, maximum: 1_000_000_000, multipleOf: 0.000001, not: { const: 0 }, description: 'Signed: + adds, − removes.' },
      unit_cost: AMOUNT_SCHEMA,
      reason: REASON_SCHEMA,
    },
  },
  output: OUTCOME_SCHEMA,
  async handler(input, ctx) {
    const { date, dryRun, place } = await movementPlace(ctx, input);
    const qty = toMicro(input.quantity);
    let value = 0;
    if (qty > 0) {
      if (input.unit_cost !== undefined) value = Math.round(input.quantity * input.unit_cost);
      else {
        const found = await surplusValue(ctx.db, place._id, qty, place.initial);
        if (found === null) throw new CuadraError('invalid_input', 'The item has no cost in this warehouse yet: give unit_cost.', { field: '/unit_cost' });
        value = found;
      }
    }
    const outcome = await writeMovement(ctx.db, ctx.graph, place, { type: 'adjustment', date, qty, value, source: null, reason: input.reason }, { now: ctx.now, dryRun });
    return outcomeView(outcome);
  },
}));
