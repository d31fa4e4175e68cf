import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { DIMENSION_KEY, DIMENSION_VIEW_SCHEMA, dimensionId, findDimension, tagDimensions } from '../model.ts';

/** Archives (or restores) a dimension: lines are no longer tagged on it; history keeps its tags. */
export const archive = defineTool({
  name: 'dimensions.archive',
  description: 'Archive a dimension (status inactive): no new line may be tagged on it; lines already tagged keep their tags and profitability still reads them. restore: true makes it active again.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['key'], properties: { key: DIMENSION_KEY, restore: { type: 'boolean' } } },
  output: recordOutput('dimension', DIMENSION_VIEW_SCHEMA),
  async handler(input, ctx) {
    const found = await findDimension(ctx.db, ctx.workspace, input.key);
    if (!found) throw new CuadraError('not_found', `There is no dimension ${input.key} in this workspace.`);
    const status = input.restore ? 'active' : 'inactive';
    if (found.status === status) return { dimension: found };
    const after = await tagDimensions(ctx.db).findOneAndUpdate(
      { _id: dimensionId(ctx.workspace, input.key), workspace: ctx.workspace, status: { $ne: status } },
      { $set: { status, updated_at: ctx.now }, $setOnInsert: { key: input.key, name: found.name, default: found.default, created_at: ctx.now } },
      { upsert: true, returnDocument: 'after' },
    ).lean().catch((err: { code?: number }) => { if (err.code === 11000) return null; throw err; });
    return { dimension: { ...found, status: after?.status ?? status } };
  },
});
