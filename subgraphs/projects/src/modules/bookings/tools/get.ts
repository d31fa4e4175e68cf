import { defineGetTool } from '@cuadra/shared';
import { isoIn } from '../../../calendar/time.ts';
import { BOOKING_VIEW_SCHEMA, bookings, bookingView, type BookingDoc } from '../model.ts';

/** One booking by id. */
export const get = defineGetTool<BookingDoc>({
  name: 'bookings.get', description: 'One booking by id.',
  model: bookings, view: (b) => bookingView(b, isoIn(b.start, b.time_zone)), viewSchema: BOOKING_VIEW_SCHEMA, key: 'booking', what: 'booking',
});
