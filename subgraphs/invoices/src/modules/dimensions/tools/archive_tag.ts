import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { DIMENSION_KEY, TAG_KEY, TAG_VIEW_SCHEMA, tagId, tags, tagView } from '../model.ts';

/** Archives (or restores) a tag. */
export const archiveTag = defineTool({
  name: 'dimensions.archive_tag',
  description: 'Archive a tag (status inactive): no new line may carry it; lines already tagged keep it and profitability still reads them. restore: true makes it active again.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['dimension', 'key'], properties: { dimension: DIMENSION_KEY, key: TAG_KEY, restore: { type: 'boolean' } } },
  output: recordOutput('tag', TAG_VIEW_SCHEMA),
  async handler(input, ctx) {
    const status = input.restore ? 'active' : 'inactive';
    const _id = tagId(ctx.workspace, input.dimension, input.key);
    const after = await tags(ctx.db).findOneAndUpdate({ _id, workspace: ctx.workspace, status: { $ne: status } }, { $set: { status, updated_at: ctx.now } }, { returnDocument: 'after' }).lean()
      ?? await tags(ctx.db).findOne({ _id, workspace: ctx.workspace }).lean();
    if (!after) throw new CuadraError('not_found', `There is no tag ${input.key} in the dimension ${input.dimension}.`);
    return { tag: tagView(after) };
  },
});
