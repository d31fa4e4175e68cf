import { CuadraError, defineTool } from '@cuadra/shared';
import { parties, partyView } from '../../models/party.ts';

/** Reads one party of the caller's workspace. */
export const get = defineTool<{ id: string }>({
  name: 'parties.get',
  description: 'Get one party (customer or vendor) by id, with its tax id, contacts, addresses and tags.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  },
  async handler(input, ctx) {
    const party = await parties(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!party) throw new CuadraError('not_found', `No party ${input.id} exists in this workspace.`);
    return { party: partyView(party) };
  },
});
