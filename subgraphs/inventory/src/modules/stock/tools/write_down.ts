import { CuadraError, defineTool } from '@cuadra/shared';
import { writeMovement } from '../ledger.ts';
import { stockBalances } from '../model.ts';
import { AMOUNT_SCHEMA, MOVEMENT_FIELDS, movementPlace, OUTCOME_SCHEMA, outcomeView, withDryRunPreview } from '../place.ts';
import { fromMicro, share, QTY_SCALE } from '../valuation.ts';

const { dry_run: DRY_RUN, date: DATE, item_id: ITEM, warehouse_id: WAREHOUSE } = MOVEMENT_FIELDS;

/** The write-down of a stock to its net realisable value at a period end. */
export const writeDownTool = withDryRunPreview(defineTool({
  name: 'stock.write_down',
  description: 'Write the stock of a product in a warehouse down to its net realisable value (NIIF para pymes §13.19 and §27.2: the estimated selling price less the costs to complete and sell), given per unit, with the reason (how it was estimated). The difference between the carrying amount and quantity × NRV is an expense: journal entry debit 5199 provisiones, credit 1499 (the allowance), released to cost of sales as the goods leave. Refused 409 conflict when the carrying amount is already at or below NRV (nothing to write down) or the month is closed.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['item_id', 'warehouse_id', 'net_realisable_value', 'reason'],
    properties: {
      item_id: ITEM, warehouse_id: WAREHOUSE, date: DATE, dry_run: DRY_RUN,
      net_realisable_value: { ...AMOUNT_SCHEMA, description: 'Per unit, minor units: estimated selling price less the costs to complete and sell.' },
      reason: { type: 'string', minLength: 1, maxLength: 500 },
    },
  },
  output: OUTCOME_SCHEMA,
  async handler(input, ctx) {
    const { date, dryRun, place } = await movementPlace(ctx, input);
    const b = (await stockBalances(ctx.db).findOne({ _id: place._id }).lean()) ?? place.initial!;
    if (b.last_date && date < b.last_date) throw new CuadraError('conflict', `The write-down is measured on the stock as it is now; date it on or after the latest movement (${b.last_date}).`);
    const nrv = share(input.net_realisable_value, b.qty, QTY_SCALE);
    const amount = b.value - nrv;
    if (b.qty <= 0 || amount <= 0) throw new CuadraError('conflict', `The carrying amount of ${fromMicro(b.qty)} ${b.unit} of ${b.item_name} in ${b.warehouse_code} (${b.value}) is not above its net realisable value (${nrv}): nothing to write down.`);
    const outcome = await writeMovement(ctx.db, ctx.graph, place, { type: 'write_down', date, qty: 0, value: -amount, source: null, reason: input.reason }, { now: ctx.now, dryRun });
    return outcomeView(outcome);
  },
}));
