import { defineListTool, searchTerm } from '@cuadra/shared';
import { BILL_STATUSES, BILL_VIEW_SCHEMA, billMatches, bills, billView, type BillDoc } from '../model.ts';

/** Lists bills, newest first, one bounded page at a time. */
export const list = defineListTool({
  name: 'bills.list',
  description: 'List bills, newest first; filter by status, vendor, or a case-insensitive search over the supplier number and vendor name.',
  model: bills,
  view: (b: BillDoc) => billView(b),
  viewSchema: BILL_VIEW_SCHEMA,
  filters: {
    status: { enum: BILL_STATUSES },
    vendor_id: { type: 'string', minLength: 1, maxLength: 64 },
    search: { type: 'string', minLength: 1, maxLength: 100 },
  },
  // Candidates from the trigrams kept at write time (search_lc), never a walk of the workspace.
  searchTerm: ({ search }) => searchTerm(search),
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || input.vendor_id || text
      ? (b: BillDoc) => (!input.status || b.status === input.status) && (!input.vendor_id || b.vendor_id === input.vendor_id) && (!text || billMatches(b, text))
      : undefined;
  },
});
