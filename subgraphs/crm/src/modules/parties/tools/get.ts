import { defineGetTool } from '@cuadra/shared';
import { parties, PARTY_VIEW_SCHEMA, partyView, type PartyDoc } from '../model.ts';

/** Reads one party of the caller's workspace. */
export const get = defineGetTool<PartyDoc>({
  name: 'parties.get',
  description: 'Get one party (customer or vendor) by id, with its tax id, contacts, addresses and tags.',
  model: parties,
  view: partyView,
  viewSchema: PARTY_VIEW_SCHEMA,
  key: 'party',
  what: 'party',
});
