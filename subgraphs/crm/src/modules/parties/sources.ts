import { defineSource } from '@cuadra/shared';
import { isKind, parties, partyMatches, type PartyDoc } from './model.ts';

/** The compact row of a party in records.list. */
function partyRow(p: PartyDoc) {
  return {
    id: p._id, kind: p.kind, name: p.name,
    tax_id: p.tax_id ? `${p.tax_id.number}${p.tax_id.check_digit === null ? '' : `-${p.tax_id.check_digit}`}` : null,
    email: p.email, phone: p.phone, tags: p.tags, status: p.status,
  };
}

/**
 * records.list `parties`: kind customer (includes `both`), vendor (includes `both`) or both;
 * status active or archived; search a case-insensitive substring of the name, tax id number or
 * e-mail — the same tests as parties.list.
 */
export const partiesSource = defineSource<PartyDoc>({
  model: parties,
  search: partyMatches,
  kinds: { customer: (p) => isKind(p, 'customer'), vendor: (p) => isKind(p, 'vendor'), both: (p) => isKind(p, 'both') },
  statuses: ['active', 'archived'],
  row: partyRow,
});
