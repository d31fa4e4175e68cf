import { defineTool } from '@cuadra/shared';

/** The action ledger, newest first. */
export const list = defineTool<{ tool?: string; module?: string; actor?: string; from?: string; to?: string; limit?: number }>({
  name: 'ledger.list',
  description: 'List entries of the workspace action ledger, newest first: every invoke attempt with its actor, tool, risk, outcome and hash chain; filter by tool, module, actor id or time.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      tool: { type: 'string', pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)+$' },
      module: { type: 'string', pattern: '^[a-z0-9_]+$' },
      actor: { type: 'string', minLength: 1, maxLength: 64 },
      from: { type: 'string', format: 'date-time' },
      to: { type: 'string', format: 'date-time' },
      limit: { type: 'integer', minimum: 1, maximum: 200 },
    },
  },
  async handler(input, ctx) {
    const rows = await ctx.governance.ledger.list(ctx.workspace, input);
    return { rows };
  },
});
