import { approvalView, CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { APPROVAL_VIEW_SCHEMA } from '../views.ts';

/**
 * Withdraws the caller's own pending request (what an MCP `tasks/cancel` does to a held call).
 * One conditional update on `status: pending` and the requesting credential: a call that a person
 * approved first runs, one withdrawn first never does, and nobody withdraws another's request.
 */
export const withdraw = defineTool({
  name: 'approvals.withdraw',
  description: 'Withdraw your own call that is still waiting for a person: it will not run, and nobody can approve it any more. Only the credential that made the call can withdraw it, and only while nobody has decided.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('approval', APPROVAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const existing = await ctx.governance.approvals.get(ctx.workspace, input.id);
    // Another's request reads as unknown: an approval id says nothing to whoever did not make the call.
    if (!existing || existing.requested_by.credential_id !== ctx.principal.credential_id) {
      throw new CuadraError('not_found', `No approval ${input.id} of yours exists in this workspace.`);
    }
    const withdrawn = await ctx.governance.approvals.withdraw(ctx.workspace, input.id, ctx.principal.credential_id, ctx.now);
    if (!withdrawn) throw new CuadraError('conflict', `This approval is ${approvalView(existing, ctx.now).status}; only a pending approval can be withdrawn.`);
    return { approval: approvalView(withdrawn, ctx.now) };
  },
});
