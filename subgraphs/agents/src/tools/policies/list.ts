import { defineTool } from '@cuadra/shared';

/** The workspace's policies, highest priority first. */
export const list = defineTool<Record<string, never>>({
  name: 'policies.list',
  description: 'List the autonomy policies of the workspace, highest priority first.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  async handler(_input, ctx) {
    const rows = await ctx.governance.policies.list(ctx.workspace);
    return { rows, total: rows.length };
  },
});
