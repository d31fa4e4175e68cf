import { defineListTool, searchTerm } from '@cuadra/shared';
import { RENTAL_STATUSES, RENTAL_VIEW_SCHEMA, rentalMatches, rentals, rentalView, type RentalDoc } from '../model.ts';

/** Lists rentals, newest first. */
export const list = defineListTool({
  name: 'rentals.list',
  description: 'List rentals, newest first; filter by status or a case-insensitive search over the resource and customer names.',
  model: rentals,
  view: (r: RentalDoc) => rentalView(r),
  viewSchema: RENTAL_VIEW_SCHEMA,
  filters: { status: { enum: RENTAL_STATUSES }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || text ? (r: RentalDoc) => (!input.status || r.status === input.status) && (!text || rentalMatches(r, text)) : undefined;
  },
});
