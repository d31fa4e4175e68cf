import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isoIn, wallClockText } from '../../../calendar/time.ts';
import { bookingTypes, type BookingTypeDoc } from '../../booking_types/model.ts';
import { bookingOf, syncEvent, writeBooking } from '../book.ts';
import { releaseCells } from '../claims.ts';
import { mailInvitation } from '../invitation.ts';
import { BOOKING_VIEW_SCHEMA, bookingView } from '../model.ts';

/** Cancels a booking: its time is offered again and the booker gets the cancellation. */
export const cancel = defineTool({
  name: 'bookings.cancel',
  description: 'Cancel a booking: its calendar event is cancelled, its slot is offered again at once, and the booker is e-mailed the iCalendar cancellation.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: recordOutput('booking', BOOKING_VIEW_SCHEMA),
  async handler(input, ctx) {
    const before = await bookingOf(ctx.db, ctx.workspace, input.id);
    if (before.status === 'cancelled') throw new CuadraError('conflict', `The booking ${input.id} is already cancelled.`);
    // Cancelled first (availability stops counting it), then its claims are given back.
    const after = await writeBooking(ctx.db, before, { status: 'cancelled', claims: [], day_claim: null }, ctx.now, ctx.graph);
    await releaseCells(ctx.db, [...before.claims, ...(before.day_claim ? [before.day_claim] : [])], before._id);
    await syncEvent(ctx.db, after, before.time_zone, ctx.now);
    const type = await bookingTypes(ctx.db).findOne({ _id: before.type_id, workspace: ctx.workspace }).lean<BookingTypeDoc>();
    if (type) {
      await mailInvitation(after, type, 'CANCEL', wallClockText(after.start, after.time_zone), ctx.now)
        .catch((err: unknown) => ctx.log.warn({ err, booking: after._id }, 'booking cancellation not sent'));
    }
    return { booking: bookingView(after, isoIn(after.start, after.time_zone)) };
  },
});
