import { CURSOR_SCHEMA, decodeCursor, defineTool, encodeCursor, pageOutput } from '@cuadra/shared';
import { LEDGER_ENTRY_SCHEMA } from '../views.ts';

/** The action ledger, newest first, one bounded page at a time. */
export const list = defineTool({
  name: 'ledger.list',
  description: 'List entries of the workspace action ledger, newest first: every invoke attempt with its actor, tool, risk, outcome and hash chain; filter by tool, module, actor id, agent run or time. One page reads at most 10,000 entries: a rare filter may give a short or empty page with next_cursor; pass it back as cursor to continue.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      tool: { type: 'string', pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)+$' },
      module: { type: 'string', pattern: '^[a-z0-9_]+$' },
      actor: { type: 'string', minLength: 1, maxLength: 64 },
      /** An agent run's id: the calls that run made. */
      run: { type: 'string', minLength: 1, maxLength: 64 },
      from: { type: 'string', format: 'date-time' },
      to: { type: 'string', format: 'date-time' },
      limit: { type: 'integer', minimum: 1, maximum: 200 },
      cursor: CURSOR_SCHEMA,
    },
  },
  // No `total`: the chain is read in windows from its end, never counted.
  output: pageOutput(LEDGER_ENTRY_SCHEMA),
  async handler(input, ctx) {
    const before = input.cursor ? decodeCursor('ledger', ctx.workspace, input.cursor) : undefined;
    const page = await ctx.governance.ledger.list(ctx.workspace, { ...input, before });
    return { rows: page.rows, ...(page.next_before ? { next_cursor: encodeCursor('ledger', ctx.workspace, page.next_before) } : {}) };
  },
});
