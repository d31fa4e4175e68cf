import { approvalView, CuadraError, defineTool, holdsSecret, ID_INPUT, isRequester, recordOutput, sealerFromEnv } from '@cuadra/shared';
import { APPROVAL_VIEW_SCHEMA } from '../views.ts';

const sealer = sealerFromEnv();

/** One approval, with its outcome once it ran. */
export const get = defineTool({
  name: 'approvals.get',
  description: 'Get one approval: the held call (tool, input, who asked), the decision, and the result once it ran. A secret in the result (a new API key, an invitation link) is shown once, to the requester; otherwise it reads "[redacted]".',
  risk: 'read',
  input: ID_INPUT,
  output: recordOutput('approval', APPROVAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const doc = await ctx.governance.approvals.get(ctx.workspace, input.id);
    if (!doc) throw new CuadraError('not_found', `No approval ${input.id} exists in this workspace.`);
    // A secret in the result (CONTRACT.md §9) reaches its requester once; everyone else sees it redacted.
    if (doc.result && holdsSecret(doc.result) && isRequester(doc, ctx.principal) && (await ctx.governance.approvals.takeSecret(ctx.workspace, doc._id, ctx.now))) {
      return { approval: approvalView(doc, ctx.now, { sealer }) };
    }
    return { approval: approvalView(doc, ctx.now) };
  },
});
