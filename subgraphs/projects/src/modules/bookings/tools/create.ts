import { defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isoIn, wallClockText } from '../../../calendar/time.ts';
import { activeType, book, checkSlot } from '../book.ts';
import { askerZone, BOOKER_FIELDS, checkAnswers } from '../fields.ts';
import { mailInvitation } from '../invitation.ts';
import { BOOKING_VIEW_SCHEMA, bookings, bookingView } from '../model.ts';

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
    const zone = askerZone(type, input.time_zone);
    const answers = checkAnswers(type, input.answers as Record<string, string> | undefined);
    const start = new Date(input.start);
    await checkSlot(ctx.db, type, start, ctx.now, zone);
    const { booking } = await book(ctx.db, ctx.workspace, { type, start, name: input.name.trim(), email: input.email, zone, answers, now: ctx.now });
    const when = wallClockText(start, zone);
    try {
      if (await mailInvitation(booking, type, 'REQUEST', when, ctx.now)) {
        await bookings(ctx.db).updateOne({ _id: booking._id }, { $set: { invited_at: ctx.now } });
        booking.invited_at = ctx.now;
      }
    } catch (err) {
      // The booking stands; the answer says the invitation did not leave.
      ctx.log.warn({ err, booking: booking._id }, 'booking invitation not sent');
    }
    return { booking: bookingView(booking, isoIn(booking.start, zone)) };
  },
});
