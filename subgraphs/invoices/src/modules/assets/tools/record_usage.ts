import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { ASSET_VIEW_SCHEMA, assets, assetView, findAsset } from '../model.ts';
import { assertActive } from '../ops.ts';

/** Records the units an asset depreciated by units of production produced in a month not yet depreciated. */
export const recordUsage = defineTool({
  name: 'assets.record_usage',
  description: 'Record the units a units-of-production asset produced in a month (YYYY-MM) that is not yet depreciated; the month\'s depreciation is base × units / total_units. Recording a month again replaces its figure.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'month', 'units'],
    properties: { id: ID_SCHEMA, month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' }, units: { type: 'integer', minimum: 0, maximum: 1e12 } },
  },
  output: recordOutput('asset', ASSET_VIEW_SCHEMA),
  async handler(input, ctx) {
    const a = await findAsset(ctx, input.id);
    assertActive(a);
    if (a.method !== 'units_of_production') throw new CuadraError('conflict', `Fixed asset ${a._id} depreciates by ${a.method}, not by units of production.`);
    // The condition on next_month: a month the run already depreciated is never changed after the fact.
    const after = await assets(ctx.db).findOneAndUpdate(
      { _id: a._id, workspace: ctx.workspace, status: 'active', next_month: { $lte: input.month } },
      { $set: { [`usage.${input.month}`]: input.units, updated_at: ctx.now }, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('conflict', `The month ${input.month} of fixed asset ${a._id} is already depreciated; its usage can no longer change.`);
    return { asset: assetView(after) };
  },
});
