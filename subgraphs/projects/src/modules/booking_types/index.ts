import { defineModule, defineSource } from '@cuadra/shared';
import { bookingTypeMatches, bookingTypes, type BookingTypeDoc } from './model.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';

/** Kinds of meetings people book from the public page. */
export const bookingTypesModule = defineModule({
  name: 'booking_types',
  tools: [create, update, archive, list, get],
  models: [bookingTypes],
  listed: [{ model: bookingTypes }],
  reads: {
    sources: {
      booking_types: defineSource<BookingTypeDoc>({
        model: bookingTypes, search: bookingTypeMatches, statuses: ['active', 'archived'],
        row: (t) => ({ id: t._id, slug: t.slug, name: t.name, duration_min: t.duration_min, time_zone: t.time_zone, status: t.status, price: t.price ?? null, created_at: t.created_at.toISOString() }),
      }),
    },
  },
});
