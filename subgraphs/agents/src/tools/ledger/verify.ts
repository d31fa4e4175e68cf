import { defineTool } from '@cuadra/shared';

/** Recomputes the hash chain of the workspace's ledger. */
export const verify = defineTool<Record<string, never>>({
  name: 'ledger.verify',
  description: 'Verify the workspace action ledger: recomputes every hash of the chain and says where it breaks if an entry was edited, removed or reordered.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  async handler(_input, ctx) {
    return { ...(await ctx.governance.ledger.verify(ctx.workspace)) };
  },
});
