import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { POLICY_SCHEMA } from '../views.ts';
import { policyFields } from '../fields.ts';

/** Changes the fields of a policy it is given. */
export const update = defineTool({
  name: 'policies.update',
  description: 'Change an autonomy policy: the fields given replace the stored ones (name, priority, match, conditions, effect).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: { id: ID_SCHEMA, ...policyFields },
  },
  output: recordOutput('policy', POLICY_SCHEMA),
  async handler(input, ctx) {
    const { id, ...changes } = input;
    const policy = await ctx.governance.policies.update(ctx.workspace, id, changes, ctx.now);
    if (!policy) throw new CuadraError('not_found', `No policy ${id} exists in this workspace.`);
    return { policy };
  },
});
