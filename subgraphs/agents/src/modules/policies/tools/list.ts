import { defineTool } from '@cuadra/shared';
import { POLICY_SCHEMA } from '../views.ts';

/** The workspace's policies, highest priority first. */
export const list = defineTool({
  name: 'policies.list',
  description: 'List the autonomy policies of the workspace, highest priority first.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  // Every policy of the workspace, unpaged (a workspace keeps few): `total` is always given.
  output: {
    type: 'object', additionalProperties: false, required: ['rows', 'total'],
    properties: { rows: { type: 'array', items: POLICY_SCHEMA }, total: { type: 'integer', minimum: 0 } },
  },
  async handler(_input, ctx) {
    const rows = await ctx.governance.policies.list(ctx.workspace);
    return { rows, total: rows.length };
  },
});
