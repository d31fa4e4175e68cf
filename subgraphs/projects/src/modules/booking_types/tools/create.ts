import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { BOOKING_TYPE_FIELDS, newTypeDefaults, resolveBookingType } from '../fields.ts';
import { BOOKING_TYPE_VIEW_SCHEMA, bookingTypes, bookingTypeView, type BookingTypeDoc } from '../model.ts';

/** Creates a kind of meeting people can book. */
export const create = defineTool({
  name: 'booking_types.create',
  description:
    'Create a booking type: slug (its public page /book/<workspace>/<slug>), name, duration and slot step in minutes (multiples of 5), buffers before ' +
    'and after, minimum notice (minutes), booking window (days ahead), daily limit, weekly hours per day (mon…sun: [{start, end}] as HH:mm in time_zone, ' +
    'default Monday–Friday 09:00–12:00 and 14:00–17:00 America/Bogota), date overrides (empty intervals: closed), Colombian public holidays closed ' +
    '(exclude_holidays, default true), location or https video link, questions, confirmation required, price (an invoice when confirmed) and host e-mail.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['slug', 'name', 'duration_min'], properties: BOOKING_TYPE_FIELDS },
  output: recordOutput('booking_type', BOOKING_TYPE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const fields = resolveBookingType(input, newTypeDefaults(input.duration_min));
    if (input.slot_step_min === undefined) fields.slot_step_min = input.duration_min;
    const doc: BookingTypeDoc = { ...fields, _id: newId('bkt'), workspace: ctx.workspace, slug_key: `${ctx.workspace}|${input.slug}`, status: 'active', created_at: ctx.now, updated_at: ctx.now };
    try {
      await createPositioned(bookingTypes(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `A booking type with slug ${input.slug} already exists in this workspace.`);
      throw err;
    }
    return { booking_type: bookingTypeView(doc) };
  },
});
