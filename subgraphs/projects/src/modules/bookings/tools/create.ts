import { defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isoIn } from '../../../calendar/time.ts';
import { activeType, bookAndInvite } from '../book.ts';
import { BOOKER_FIELDS } from '../fields.ts';
import { BOOKING_VIEW_SCHEMA, bookingView } from '../model.ts';

/** Books a slot of a booking type and e-mails the booker an .ics invitation. */
export const create = defineTool({
  name: 'bookings.create',
  description:
    'Book a slot of a booking type: start (an RFC 3339 instant, one of bookings.availability\'s slots), the booker\'s name and e-mail, their time_zone ' +
    'and the answers to the type\'s questions. Makes the booking (pending when the type needs confirmation) and its calendar event, and e-mails the booker ' +
    'an .ics invitation. A slot already taken is conflict (409): never two bookings of one time.',
  risk: 'external',
  input: { type: 'object', additionalProperties: false, required: ['type_id', 'start', 'name', 'email'], properties: { type_id: ID_SCHEMA, ...BOOKER_FIELDS } },
  output: recordOutput('booking', BOOKING_VIEW_SCHEMA),
  async handler(input, ctx) {
    const type = await activeType(ctx.db, ctx.workspace, input.type_id, '/type_id');
    const booking = await bookAndInvite(ctx.db, ctx.workspace, type, { start: input.start, name: input.name, email: input.email, time_zone: input.time_zone, answers: input.answers as Record<string, string> | undefined }, ctx.now, ctx.log, { country: ctx.principal.country, graph: ctx.graph });
    return { booking: bookingView(booking, isoIn(booking.start, booking.time_zone)) };
  },
});
