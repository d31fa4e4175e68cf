import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { parties, partyView, type PartyDoc, PARTY_VIEW_SCHEMA } from '../model.ts';

/**
 * Archives a party (or restores it with `restore: true`). Nothing is deleted: invoices and
 * deals keep naming it; archived parties leave pickers and default lists.
 */
export const archive = defineTool({
  name: 'parties.archive',
  description: 'Archive a party (customer or vendor) so it leaves default lists and pickers; its documents keep naming it. `restore: true` makes it active again.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: ID_SCHEMA, restore: { type: 'boolean' } },
  },
  output: recordOutput('party', PARTY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const [from, to]: PartyDoc['status'][] = input.restore ? ['archived', 'active'] : ['active', 'archived'];
    const after = await parties(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: from },
      { $set: { status: to, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) {
      const exists = await parties(ctx.db).exists({ _id: input.id, workspace: ctx.workspace });
      if (!exists) throw new CuadraError('not_found', `No party ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Party ${input.id} is already ${to}.`);
    }
    return { party: partyView(after) };
  },
});
