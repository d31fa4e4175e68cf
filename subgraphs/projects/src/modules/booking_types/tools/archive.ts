import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { BOOKING_TYPE_VIEW_SCHEMA, bookingTypes, bookingTypeView, type BookingTypeDoc } from '../model.ts';

/** Archives a booking type: its page and availability close; bookings made stay. */
export const archive = defineTool({
  name: 'booking_types.archive',
  description: 'Archive a booking type: its public page and availability close and nothing more can be booked; bookings already made stay as they are.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('booking_type', BOOKING_TYPE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await bookingTypes(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace, status: 'active' }, { $set: { status: 'archived', updated_at: ctx.now } }, { returnDocument: 'after' }).lean<BookingTypeDoc>();
    if (!after) {
      const exists = await bookingTypes(ctx.db).exists({ _id: input.id, workspace: ctx.workspace });
      throw exists ? new CuadraError('conflict', `The booking type ${input.id} is already archived.`) : new CuadraError('not_found', `No booking type ${input.id} exists in this workspace.`);
    }
    return { booking_type: bookingTypeView(after) };
  },
});
