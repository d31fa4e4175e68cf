import { CuadraError, defineTool } from '@cuadra/shared';
import { calendarId, rentalCalendars } from '../model.ts';
import { RESOURCE_FIELDS, resourceOf } from './create.ts';

/** Whether a resource is free over a time, and which rentals hold it. */
export const availability = defineTool({
  name: 'rentals.availability',
  description: 'Whether an item or a fixed asset is free to rent from start to end, and the rentals that hold it over that time.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['start', 'end'],
    properties: { ...RESOURCE_FIELDS, start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['available', 'held_by'],
    properties: {
      available: { type: 'boolean' },
      held_by: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['rental_id', 'start', 'end'], properties: { rental_id: { type: 'string' }, start: { type: 'string' }, end: { type: 'string' } } } },
    },
  },
  async handler(input, ctx) {
    const start = new Date(input.start).toISOString();
    const end = new Date(input.end).toISOString();
    if (end <= start) throw new CuadraError('invalid_input', 'The window ends after it starts.', { field: '/end' });
    const resource = await resourceOf(ctx, input);
    const cal = await rentalCalendars(ctx.db).findById(calendarId(ctx.workspace, resource)).lean();
    const held = (cal?.holds ?? []).filter((h) => h.start < end && start < h.end).map((h) => ({ rental_id: h.rental_id, start: h.start, end: h.end }));
    return { available: held.length === 0, held_by: held };
  },
});
