import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { DEFAULT_DIMENSIONS, DIMENSION_KEY, DIMENSION_VIEW_SCHEMA, dimensionId, MAX_DIMENSIONS, NAME, tagDimensions } from '../model.ts';

/** Adds a dimension to the workspace (cost_center exists already). */
export const create = defineTool({
  name: 'dimensions.create',
  description: 'Add an analytic dimension (tag_dimensions) to the workspace — e.g. proyecto, sucursal — to tag journal, invoice and bill lines on, besides cost_center (Centro de costo), which every workspace has. Key: lower case, digits and _; at most 20 dimensions of its own.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['key', 'name'], properties: { key: DIMENSION_KEY, name: NAME } },
  output: recordOutput('dimension', DIMENSION_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (Object.hasOwn(DEFAULT_DIMENSIONS, input.key)) throw new CuadraError('conflict', `The dimension ${input.key} exists in every workspace.`);
    const model = tagDimensions(ctx.db);
    if (await model.countDocuments({ workspace: ctx.workspace, default: false }) >= MAX_DIMENSIONS) throw new CuadraError('conflict', `This workspace already has ${MAX_DIMENSIONS} dimensions of its own, the most it may have.`);
    const doc = { _id: dimensionId(ctx.workspace, input.key), workspace: ctx.workspace, key: input.key, name: input.name, default: false, status: 'active' as const, created_at: ctx.now, updated_at: ctx.now };
    try {
      await model.create(doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `The dimension ${input.key} already exists.`);
      throw err;
    }
    return { dimension: { key: doc.key, name: doc.name, default: false, status: doc.status } };
  },
});
