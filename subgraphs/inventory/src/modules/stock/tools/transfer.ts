import { CuadraError, defineTool, newId } from '@cuadra/shared';
import { writeMovement } from '../ledger.ts';
import { balanceFor, MOVEMENT_FIELDS, movementDate, OUTCOME_SCHEMA, outcomeView, QUANTITY_SCHEMA, REASON_SCHEMA, withDryRunPreview } from '../place.ts';
import { toMicro } from '../valuation.ts';

const { warehouse_id: WAREHOUSE, ...FIELDS } = MOVEMENT_FIELDS;

/** Goods moved between two warehouses of the workspace. */
export const transfer = withDryRunPreview(defineTool({
  name: 'stock.transfer',
  description: 'Move goods of a product from one warehouse to another: they leave the first at their cost by the item\'s formula and enter the second at that same cost (one transfer_out and one transfer_in movement, each naming the other; no journal entry: the goods stay in 1435). Refused 409 conflict when the first warehouse lacks the stock and the item does not allow negative stock. Written once even across a crash: the second warehouse\'s movement is finished by the next change of the first, or by the background sweep.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['item_id', 'from_warehouse_id', 'to_warehouse_id', 'quantity'],
    properties: { ...FIELDS, from_warehouse_id: WAREHOUSE, to_warehouse_id: WAREHOUSE, quantity: QUANTITY_SCHEMA, reason: REASON_SCHEMA },
  },
  output: OUTCOME_SCHEMA,
  async handler(input, ctx) {
    if (input.from_warehouse_id === input.to_warehouse_id) throw new CuadraError('invalid_input', 'A transfer goes to another warehouse.', { field: '/to_warehouse_id' });
    const date = movementDate(ctx, input.date);
    const dryRun = input.dry_run === true;
    const from = await balanceFor(ctx, input.item_id, input.from_warehouse_id, { field: '/from_warehouse_id', dryRun });
    await balanceFor(ctx, input.item_id, input.to_warehouse_id, { field: '/to_warehouse_id', dryRun });
    const id = newId('mv');
    const outcome = await writeMovement(ctx.db, ctx.graph, from, {
      type: 'transfer_out', date, qty: -toMicro(input.quantity), source: null, reason: input.reason ?? null, id,
      transferTo: { item_id: input.item_id, warehouse_id: input.to_warehouse_id, in_id: `${id}_in` },
    }, { now: ctx.now, dryRun });
    return outcomeView(outcome);
  },
}));
