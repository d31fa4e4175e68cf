import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { CALENDAR_VIEW_SCHEMA, calendarView, connectedCalendars, type ConnectedCalendarDoc } from '../model.ts';

/** Chooses whether a connected calendar's events make the workspace busy for bookings. */
export const choose = defineTool({
  name: 'calendar_accounts.choose',
  description: 'Choose whether a connected calendar counts for availability: its busy times are taken out of bookings.availability (true) or not (false).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['calendar_id', 'counts_for_availability'],
    properties: { calendar_id: ID_SCHEMA, counts_for_availability: { type: 'boolean' } },
  },
  output: recordOutput('calendar', CALENDAR_VIEW_SCHEMA),
  async handler(input, ctx) {
    const cal = await connectedCalendars(ctx.db).findOneAndUpdate(
      { _id: input.calendar_id, workspace: ctx.workspace },
      { $set: { counts_for_availability: input.counts_for_availability, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean<ConnectedCalendarDoc>();
    if (!cal) throw new CuadraError('invalid_input', `No connected calendar ${input.calendar_id} exists in this workspace.`, { field: '/calendar_id' });
    return { calendar: calendarView(cal) };
  },
});
