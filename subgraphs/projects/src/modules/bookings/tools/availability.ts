import { DATE_SCHEMA, defineTool, ID_SCHEMA, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { ZONE_SCHEMA } from '../../../calendar/time.ts';
import { askedRange, slotsOf } from '../availability.ts';
import { activeType } from '../book.ts';
import { askerZone } from '../fields.ts';

/** The free slots of a booking type over a range of days, in the asker's zone. */
export const availability = defineTool({
  name: 'bookings.availability',
  description:
    'Free slots of a booking type for the dates from–to (YYYY-MM-DD, inclusive, at most 62 days) as seen in time_zone (the asker\'s IANA zone; default ' +
    'the type\'s): its weekly hours or date overrides on its own clock, Colombian public holidays closed unless the type keeps them, after the minimum ' +
    'notice and within the booking window, at most the daily limit, less the workspace\'s events, bookings (with buffers) and the connected calendars\' ' +
    'busy times. Each slot: start and end (UTC), local (the start with the asker\'s offset), date and time on the asker\'s clock.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['type_id', 'from', 'to'],
    properties: { type_id: ID_SCHEMA, from: DATE_SCHEMA, to: DATE_SCHEMA, time_zone: ZONE_SCHEMA },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['type_id', 'time_zone', 'slots'],
    properties: {
      type_id: TEXT, time_zone: TEXT,
      slots: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['start', 'end', 'local', 'date', 'time'], properties: { start: TEXT, end: TEXT, local: TEXT, date: TEXT, time: TEXT } } },
    },
  },
  async handler(input, ctx) {
    const type = await activeType(ctx.db, ctx.workspace, input.type_id);
    const zone = askerZone(type, input.time_zone);
    const range = askedRange(input.from, input.to, zone);
    return { type_id: type._id, time_zone: zone, slots: await slotsOf(ctx.db, type, range.from, range.to, ctx.now, zone) };
  },
});
