import { defineListTool, ID_SCHEMA, searchTerm } from '@cuadra/shared';
import { isoIn } from '../../../calendar/time.ts';
import { BOOKING_STATUSES, BOOKING_VIEW_SCHEMA, bookingMatches, bookings, bookingView, type BookingDoc } from '../model.ts';

/** Lists bookings, newest first. */
export const list = defineListTool({
  name: 'bookings.list',
  description: 'List bookings, newest first; filter by type, status (pending, confirmed, cancelled) or search the booker\'s name or e-mail.',
  model: bookings,
  view: (b: BookingDoc) => bookingView(b, isoIn(b.start, b.time_zone)),
  viewSchema: BOOKING_VIEW_SCHEMA,
  filters: { type_id: ID_SCHEMA, status: { enum: [...BOOKING_STATUSES] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ type_id, status, search }) => {
    const text = searchTerm(search);
    if (!type_id && !status && !text) return undefined;
    return (b: BookingDoc) => (!type_id || b.type_id === type_id) && (!status || b.status === status) && (!text || bookingMatches(b, text));
  },
});
