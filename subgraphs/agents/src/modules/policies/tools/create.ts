import { defineTool, newId, recordOutput } from '@cuadra/shared';
import { POLICY_SCHEMA } from '../views.ts';
import { policyFields } from '../fields.ts';

/** Adds an autonomy policy to the workspace. */
export const create = defineTool({
  name: 'policies.create',
  description: 'Create an autonomy policy: which calls (tool patterns, risk classes, actor types, roles, amount over a threshold) are allowed, held for approval (hold → 202), need an approval first (ask) or denied. Highest priority wins. No policy applies to an owner\'s own calls of policies.list, policies.update, policies.delete, approvals.list, approvals.get and approvals.decide, so no policy can lock the owners out of governing the workspace.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['name', 'match', 'effect'], properties: policyFields },
  output: recordOutput('policy', POLICY_SCHEMA),
  async handler(input, ctx) {
    const policy = await ctx.governance.policies.create(ctx.workspace, {
      name: input.name, priority: input.priority ?? 0, match: input.match, conditions: input.conditions ?? {}, effect: input.effect,
    }, newId('pol'), ctx.now);
    return { policy };
  },
});
