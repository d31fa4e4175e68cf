import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { DIMENSION_KEY, findDimension, MAX_TAGS_PER_DIMENSION, NAME, TAG_KEY, TAG_VIEW_SCHEMA, tagId, tags } from '../model.ts';

/** Adds a tag to a dimension. */
export const createTag = defineTool({
  name: 'dimensions.create_tag',
  description: 'Add a tag to a dimension — e.g. cost_center "ventas" (Ventas) — so journal, invoice and bill lines can carry {cost_center: "ventas"}. At most 200 tags per dimension.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['dimension', 'key', 'name'], properties: { dimension: DIMENSION_KEY, key: TAG_KEY, name: NAME } },
  output: recordOutput('tag', TAG_VIEW_SCHEMA),
  async handler(input, ctx) {
    const dim = await findDimension(ctx.db, ctx.workspace, input.dimension);
    if (!dim) throw new CuadraError('invalid_input', `There is no dimension ${input.dimension} in this workspace.`, { field: '/dimension' });
    if (dim.status !== 'active') throw new CuadraError('conflict', `The dimension ${input.dimension} is archived; restore it before adding tags.`);
    const model = tags(ctx.db);
    if (await model.countDocuments({ workspace: ctx.workspace, dimension: input.dimension }) >= MAX_TAGS_PER_DIMENSION) throw new CuadraError('conflict', `The dimension ${input.dimension} already has ${MAX_TAGS_PER_DIMENSION} tags, the most it may have.`);
    const doc = { _id: tagId(ctx.workspace, input.dimension, input.key), workspace: ctx.workspace, dimension: input.dimension, key: input.key, name: input.name, status: 'active' as const, created_at: ctx.now, updated_at: ctx.now };
    try {
      await model.create(doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `The tag ${input.key} already exists in ${input.dimension}.`);
      throw err;
    }
    return { tag: { dimension: doc.dimension, key: doc.key, name: doc.name, status: doc.status } };
  },
});
