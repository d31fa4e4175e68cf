import { approvalView, defineTool, type ApprovalStatus } from '@cuadra/shared';

/** The approval inbox. */
export const list = defineTool<{ status?: ApprovalStatus; limit?: number }>({
  name: 'approvals.list',
  description: 'List approvals of the workspace, newest first: calls held for a person (pending), and what became of them (approved, rejected, expired, executed, failed).',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      status: { enum: ['pending', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
    },
  },
  async handler(input, ctx) {
    const docs = await ctx.governance.approvals.list(ctx.workspace, input.status, input.limit ?? 20, ctx.now);
    return { rows: docs.map((d) => approvalView(d, ctx.now)) };
  },
});
