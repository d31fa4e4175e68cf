import { defineListTool, searchTerm } from '@cuadra/shared';
import { BOOKING_TYPE_VIEW_SCHEMA, bookingTypeMatches, bookingTypes, bookingTypeView, type BookingTypeDoc } from '../model.ts';

/** Lists booking types, newest first. */
export const list = defineListTool({
  name: 'booking_types.list',
  description: 'List booking types, newest first; filter by status (active, archived) or search the name, slug or description.',
  model: bookingTypes,
  view: (t: BookingTypeDoc) => bookingTypeView(t),
  viewSchema: BOOKING_TYPE_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'archived'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    if (!status && !text) return undefined;
    return (t: BookingTypeDoc) => (!status || t.status === status) && (!text || bookingTypeMatches(t, text));
  },
});
