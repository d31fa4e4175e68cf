import { CuadraError, defineTool } from '@cuadra/shared';
import { SAVED_KEY_SCHEMA } from '../../canvas/saved.ts';
import { canvasServices } from '../services.ts';

/** Deletes a saved metric: blocks naming it then answer not_found. */
export const remove = defineTool({
  name: 'metrics.delete',
  description: 'Delete a saved metric of the workspace by key. Blocks that name "saved:<key>" then show a not_found error until it is saved again.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['key'], properties: { key: SAVED_KEY_SCHEMA } },
  output: { type: 'object', additionalProperties: false, required: ['deleted', 'key'], properties: { deleted: { const: true }, key: { type: 'string' } } },
  async handler(input, ctx) {
    if (!await canvasServices(ctx).dashboards.saved.remove(ctx.workspace, input.key)) throw new CuadraError('not_found', `There is no saved metric "${input.key}" in this workspace.`);
    return { deleted: true as const, key: input.key };
  },
});
