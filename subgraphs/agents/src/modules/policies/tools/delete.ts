import { CuadraError, defineTool, ID_INPUT } from '@cuadra/shared';

/** Removes a policy (e.g. the owner relaxing the default hold on an agent's calls). */
export const remove = defineTool({
  name: 'policies.delete',
  description: 'Delete an autonomy policy of the workspace.',
  risk: 'destructive',
  input: ID_INPUT,
  output: { type: 'object', additionalProperties: false, required: ['deleted', 'id'], properties: { deleted: { const: true }, id: { type: 'string' } } },
  async handler(input, ctx) {
    if (!(await ctx.governance.policies.delete(ctx.workspace, input.id))) throw new CuadraError('not_found', `No policy ${input.id} exists in this workspace.`);
    return { deleted: true, id: input.id };
  },
});
