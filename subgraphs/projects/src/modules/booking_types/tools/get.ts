import { defineGetTool } from '@cuadra/shared';
import { BOOKING_TYPE_VIEW_SCHEMA, bookingTypes, bookingTypeView, type BookingTypeDoc } from '../model.ts';

/** One booking type by id. */
export const get = defineGetTool<BookingTypeDoc>({
  name: 'booking_types.get', description: 'One booking type by id.',
  model: bookingTypes, view: bookingTypeView, viewSchema: BOOKING_TYPE_VIEW_SCHEMA, key: 'booking_type', what: 'booking type',
});
