import { defineListTool } from '@cuadra/shared';
import { isKind, parties, partyMatches, PARTY_VIEW_SCHEMA, partyView } from '../model.ts';

/** Lists the workspace's parties, newest first, one page at a time (CONTRACT §9). */
export const list = defineListTool({
  name: 'parties.list',
  description: 'List parties (customers, vendors) of the workspace, newest first; filter by kind (customer and vendor include both), status or a case-insensitive search of the name, tax id number or e-mail.',
  model: parties,
  view: partyView,
  viewSchema: PARTY_VIEW_SCHEMA,
  filters: {
    search: { type: 'string', minLength: 1, maxLength: 100 },
    kind: { enum: ['customer', 'vendor', 'both'] },
    status: { enum: ['active', 'archived'] },
  },
  // Candidates from the trigrams kept at write time (partySearchTexts), never a walk of the workspace.
  searchTerm: ({ search }) => search?.toLowerCase(),
  match: ({ kind, status, search }) => {
    if (!kind && !status && !search) return undefined;
    const text = search?.toLowerCase();
    return (p) => (!kind || isKind(p, kind)) && (!status || p.status === status) && (!text || partyMatches(p, text));
  },
});
