import { approvalView, CuadraError, defineTool } from '@cuadra/shared';

/** One approval, with its outcome once it ran. */
export const get = defineTool<{ id: string }>({
  name: 'approvals.get',
  description: 'Get one approval: the held call (tool, input, who asked), the decision, and the result once it ran.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  async handler(input, ctx) {
    const doc = await ctx.governance.approvals.get(ctx.workspace, input.id);
    if (!doc) throw new CuadraError('not_found', `No approval ${input.id} exists in this workspace.`);
    return { approval: approvalView(doc, ctx.now) };
  },
});
