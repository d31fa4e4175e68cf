import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isoIn, wallClockText } from '../../../calendar/time.ts';
import { bookingOf, syncEvent, writeBooking } from '../book.ts';
import { bookingTypes, type BookingTypeDoc } from '../../booking_types/model.ts';
import { mailInvitation } from '../invitation.ts';
import { BOOKING_VIEW_SCHEMA, bookingView } from '../model.ts';

/** Confirms a pending booking. */
export const confirm = defineTool({
  name: 'bookings.confirm',
  description: 'Confirm a pending booking (a type that requires confirmation): its calendar event becomes confirmed and the booker is e-mailed the confirmed invitation.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: recordOutput('booking', BOOKING_VIEW_SCHEMA),
  async handler(input, ctx) {
    const before = await bookingOf(ctx.db, ctx.workspace, input.id);
    if (before.status !== 'pending') throw new CuadraError('conflict', `The booking ${input.id} is ${before.status}, not pending.`);
    const after = await writeBooking(ctx.db, before, { status: 'confirmed' }, ctx.now, ctx.graph);
    await syncEvent(ctx.db, after, before.time_zone, ctx.now);
    // The booker's calendar holds the TENTATIVE invitation: the same UID with a higher SEQUENCE replaces it.
    const type = await bookingTypes(ctx.db).findOne({ _id: before.type_id, workspace: ctx.workspace }).lean<BookingTypeDoc>();
    if (type) {
      await mailInvitation(after, type, 'REQUEST', wallClockText(after.start, after.time_zone), ctx.now)
        .catch((err: unknown) => ctx.log.warn({ err, booking: after._id }, 'booking confirmation not sent'));
    }
    return { booking: bookingView(after, isoIn(after.start, after.time_zone)) };
  },
});
