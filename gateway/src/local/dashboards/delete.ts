import { CuadraError, defineTool, ID_INPUT } from '@cuadra/shared';
import { canvasServices } from '../services.ts';

/** Deletes a dashboard (not reversible). */
export const remove = defineTool({
  name: 'dashboards.delete',
  description: 'Delete a dashboard of the workspace. Not reversible.',
  risk: 'destructive',
  input: ID_INPUT,
  output: { type: 'object', additionalProperties: false, required: ['deleted', 'id'], properties: { deleted: { const: true }, id: { type: 'string' } } },
  async handler(input, ctx) {
    const deleted = await canvasServices(ctx).dashboards.remove(ctx.workspace, input.id);
    if (!deleted) throw new CuadraError('not_found', `No dashboard ${input.id} exists in this workspace.`);
    return { deleted: true, id: input.id };
  },
});
