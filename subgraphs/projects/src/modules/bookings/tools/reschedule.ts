import { addToDays, daysTouched, pullFromDays } from '../../../calendar/day-index.ts';
import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isoIn, wallClockText } from '../../../calendar/time.ts';
import { activeType, bookingOf, checkSlot, syncEvent, writeBooking } from '../book.ts';
import { cellsOf, claimCells, claimDay, releaseCells } from '../claims.ts';
import { dateIn } from '../../../calendar/time.ts';
import { mailInvitation } from '../invitation.ts';
import { BOOKING_VIEW_SCHEMA, bookingDays, bookingView } from '../model.ts';

/** Moves a booking to another free slot of its type. */
export const reschedule = defineTool({
  name: 'bookings.reschedule',
  description:
    'Move a booking to another free slot of its type (start, an RFC 3339 instant). The new time is claimed before the old one is given back, so the booking ' +
    'never loses its place and never takes someone else\'s; the booker is e-mailed the updated invitation.',
  risk: 'external',
  input: { type: 'object', additionalProperties: false, required: ['id', 'start'], properties: { id: ID_SCHEMA, start: { type: 'string', format: 'date-time' } } },
  output: recordOutput('booking', BOOKING_VIEW_SCHEMA),
  async handler(input, ctx) {
    const before = await bookingOf(ctx.db, ctx.workspace, input.id);
    if (before.status === 'cancelled') throw new CuadraError('conflict', `The booking ${input.id} is cancelled.`);
    const type = await activeType(ctx.db, ctx.workspace, before.type_id);
    const start = new Date(input.start);
    if (start.getTime() === before.start.getTime()) throw new CuadraError('conflict', 'The booking is already at that time.');
    await checkSlot(ctx.db, type, start, ctx.now, before.time_zone, before._id);
    const end = new Date(start.getTime() + type.duration_min * 60_000);
    const cells = cellsOf(ctx.workspace, start, end, type.buffer_before_min, type.buffer_after_min);
    const kept = new Set(before.claims);
    const fresh = cells.filter((c) => !kept.has(c));
    if (!(await claimCells(ctx.db, fresh, before._id, ctx.now))) throw new CuadraError('conflict', 'That time was just booked by someone else; choose another slot.');
    // Under a daily limit the booking takes a place of its new day (unique claim) before it gives back its old one.
    const newDate = dateIn(start, type.time_zone);
    const oldDate = dateIn(before.start, type.time_zone);
    let dayClaim = before.day_claim;
    if (type.daily_limit !== null && (newDate !== oldDate || !before.day_claim)) {
      dayClaim = await claimDay(ctx.db, ctx.workspace, type._id, newDate, type.daily_limit, before._id, ctx.now);
      if (!dayClaim) {
        await releaseCells(ctx.db, fresh, before._id);
        throw new CuadraError('conflict', `${type.name} is fully booked that day.`);
      }
    }
    const freshDay = dayClaim !== before.day_claim && dayClaim ? [dayClaim] : [];
    await addToDays(ctx.db, bookingDays, ctx.workspace, daysTouched(start, end, 1), before._id);
    let after;
    try {
      after = await writeBooking(ctx.db, before, { start, end, claims: cells, day_claim: dayClaim, buffer_before_min: type.buffer_before_min, buffer_after_min: type.buffer_after_min }, ctx.now, ctx.graph);
    } catch (err) {
      await releaseCells(ctx.db, [...fresh, ...freshDay], before._id);
      throw err;
    }
    const now = new Set(cells);
    await releaseCells(ctx.db, [...before.claims.filter((c) => !now.has(c)), ...(freshDay.length && before.day_claim ? [before.day_claim] : [])], before._id);
    const oldDays = daysTouched(before.start, before.end, 1).filter((d) => !daysTouched(start, end, 1).includes(d));
    await pullFromDays(ctx.db, bookingDays, ctx.workspace, oldDays, before._id);
    await syncEvent(ctx.db, after, type.time_zone, ctx.now);
    await mailInvitation(after, type, 'REQUEST', wallClockText(start, before.time_zone), ctx.now)
      .catch((err: unknown) => ctx.log.warn({ err, booking: after._id }, 'booking update not sent'));
    return { booking: bookingView(after, isoIn(after.start, after.time_zone)) };
  },
});
