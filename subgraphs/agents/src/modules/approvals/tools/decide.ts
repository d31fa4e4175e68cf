import { approvalView, CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { APPROVAL_VIEW_SCHEMA } from '../views.ts';

/**
 * Approves or rejects a pending call. Once: the change is a conditional update on
 * `status: pending`, so of two people deciding at the same moment exactly one wins.
 */
export const decide = defineTool({
  name: 'approvals.decide',
  description: 'Approve or reject a call waiting for a person. An approved held call then runs exactly once, as its original caller; an approved ask call may be repeated once with X-Approval-Id. Nobody decides their own request; agents decide none.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'decision'],
    properties: {
      id: ID_SCHEMA,
      decision: { enum: ['approve', 'reject'] },
      reason: { type: 'string', maxLength: 1000 },
    },
  },
  output: recordOutput('approval', APPROVAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { principal } = ctx;
    if (principal.actor.type === 'agent' || principal.role === 'agent') {
      throw new CuadraError('policy_denied', 'An agent cannot decide approvals; a person must.');
    }
    const existing = await ctx.governance.approvals.get(ctx.workspace, input.id);
    if (!existing) throw new CuadraError('not_found', `No approval ${input.id} exists in this workspace.`);
    // "Nobody decides their own request" means the person, whatever app, key or session carries
    // them (CONTRACT.md §9): the same credential, the same actor, or the same person behind either.
    const requester = existing.principal;
    const samePerson = Boolean(principal.person) && principal.person === (requester?.person ?? null);
    if (existing.requested_by.credential_id === principal.credential_id || existing.requested_by.id === principal.actor.id || samePerson) {
      throw new CuadraError('policy_denied', 'Nobody decides their own request.');
    }
    const decided = await ctx.governance.approvals.decide(
      ctx.workspace, input.id, input.decision === 'approve' ? 'approved' : 'rejected',
      { type: principal.actor.type, id: principal.actor.id, ...(principal.person ? { person: principal.person } : {}) }, input.reason ?? null, ctx.now,
    );
    if (!decided) {
      const now = approvalView(existing, ctx.now);
      throw new CuadraError('conflict', `This approval is ${now.status}; only a pending approval can be decided.`);
    }
    return { approval: approvalView(decided, ctx.now) };
  },
});
