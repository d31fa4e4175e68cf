import { CuadraError, defineTool, ID_SCHEMA, releasePosition } from '@cuadra/shared';
import { categorizationRules } from '../model.ts';

/** Deletes a categorization rule (transactions already reconciled keep what they were matched to). */
export const deleteRule = defineTool({
  name: 'bank.delete_rule',
  description: 'Delete a categorization rule. Reconciliations already made are not changed.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: { type: 'object', additionalProperties: false, required: ['id', 'deleted'], properties: { id: { type: 'string' }, deleted: { const: true } } },
  async handler(input, ctx) {
    const gone = await categorizationRules(ctx.db).findOneAndDelete({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!gone) throw new CuadraError('not_found', `No categorization rule ${input.id} exists in this workspace.`);
    await releasePosition(ctx.db, 'categorization_rules', ctx.workspace);
    return { id: input.id, deleted: true as const };
  },
});
