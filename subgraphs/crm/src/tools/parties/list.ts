import { defineListTool } from '@cuadra/shared';
import { parties, PARTY_VIEW_SCHEMA, partyView, type PartyDoc } from '../../models/party.ts';

/** Whether a party passes the list's filters; null when no filter is given. */
export function partyFilter(f: { kind?: string; status?: string; search?: string }): ((p: PartyDoc) => boolean) | null {
  if (!f.kind && !f.status && !f.search) return null;
  const text = f.search?.toLowerCase();
  return (p) =>
    // `both` is a customer and a vendor: asking for customers includes it.
    (!f.kind || p.kind === f.kind || (f.kind !== 'both' && p.kind === 'both'))
    && (!f.status || p.status === f.status)
    && (!text || p.name_lc.includes(text));
}

/** Lists the workspace's parties, newest first, one page at a time (CONTRACT §9). */
export const list = defineListTool<PartyDoc, { search?: string; kind?: PartyDoc['kind']; status?: PartyDoc['status']; limit?: number; cursor?: string }>({
  name: 'parties.list',
  description: 'List parties (customers, vendors) of the workspace, newest first; filter by kind, status or a case-insensitive name search.',
  model: parties,
  view: partyView,
  viewSchema: PARTY_VIEW_SCHEMA,
  filters: {
    search: { type: 'string', minLength: 1, maxLength: 100 },
    kind: { enum: ['customer', 'vendor', 'both'] },
    status: { enum: ['active', 'archived'] },
  },
  match: (input) => partyFilter(input) ?? undefined,
});
