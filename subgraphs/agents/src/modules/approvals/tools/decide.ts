import { approvalView, CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { APPROVAL_VIEW_SCHEMA } from '../views.ts';

/**
 * Approves or rejects a pending call. Once: the change is a conditional update on
 * `status: pending`, so of two people deciding at the same moment exactly one wins.
 */
export const decide = defineTool({
  name: 'approvals.decide',
  description: 'Approve or reject a call waiting for a person. An approved held call then runs exactly once, as its original caller; an approved ask call may be repeated once with X-Approval-Id. Only a person decides, never the person the request comes from (through any app or key, or a key made by their key); agents and keys with no person behind them decide none.',
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
    // Only a person decides (CONTRACT.md §10): a credential with no person behind it — the operator's
    // key from `workspace create`, or any key made by such a key — never does, whatever its role.
    if (!principal.person) {
      throw new CuadraError('policy_denied', 'This credential has no person behind it, so it cannot decide approvals; a person must (signed in, through their app, or with a key they made).');
    }
    const existing = await ctx.governance.approvals.get(ctx.workspace, input.id);
    if (!existing) throw new CuadraError('not_found', `No approval ${input.id} exists in this workspace.`);
    // "Nobody decides their own request" follows the chain of creation (CONTRACT.md §10): a key made
    // by a person, or by a key that person made, carries that person (`person`, set when the key was
    // created from its creator's own); so the same credential, the same actor, or the same person
    // behind either is refused.
    const requester = existing.principal;
    const samePerson = principal.person === (requester?.person ?? null);
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
