import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { BOOKING_TYPE_FIELDS, resolveBookingType } from '../fields.ts';
import { BOOKING_TYPE_VIEW_SCHEMA, bookingTypes, bookingTypeView, type BookingTypeDoc } from '../model.ts';

const { slug: _slug, ...FIELDS } = BOOKING_TYPE_FIELDS;

/** Changes a booking type; bookings already made keep their times. */
export const update = defineTool({
  name: 'booking_types.update',
  description: 'Change a booking type (any field but its slug); bookings already made keep their times. An archived type is refused (conflict).',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, ...FIELDS } },
  output: recordOutput('booking_type', BOOKING_TYPE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const before = await bookingTypes(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean<BookingTypeDoc>();
    if (!before) throw new CuadraError('not_found', `No booking type ${input.id} exists in this workspace.`);
    if (before.status === 'archived') throw new CuadraError('conflict', `The booking type ${input.id} is archived.`);
    const { id: _id, ...fields } = input;
    const after = { ...before, ...resolveBookingType(fields, before), updated_at: ctx.now };
    const { _id: _i, workspace: _w, slug_key: _k, created_at: _c, ...set } = after;
    const written = await bookingTypes(ctx.db).updateOne({ _id: input.id, workspace: ctx.workspace, updated_at: before.updated_at, status: 'active' }, { $set: set });
    if (written.matchedCount !== 1) throw new CuadraError('conflict', `The booking type ${input.id} changed meanwhile; read it again and retry.`);
    return { booking_type: bookingTypeView(after) };
  },
});
