import { approvalView, CURSOR_SCHEMA, defineTool, pageOutput } from '@cuadra/shared';
import { APPROVAL_VIEW_SCHEMA } from '../views.ts';

/** The approval inbox. */
export const list = defineTool({
  name: 'approvals.list',
  description: 'List approvals of the workspace, newest first: calls held for a person (pending), and what became of them (approved, rejected, expired, executed, failed). Pages by cursor: pass next_cursor back as cursor; a status filter may give a short page that still continues.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      status: { enum: ['pending', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  // No `total`: a page of the inbox is read by position, never counted.
  output: pageOutput(APPROVAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const page = await ctx.governance.approvals.list(ctx.workspace, input.status, input.limit ?? 20, ctx.now, input.cursor);
    return { rows: page.rows.map((d) => approvalView(d, ctx.now)), ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
  },
});
