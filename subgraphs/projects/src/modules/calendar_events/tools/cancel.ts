import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isInstanceOf } from '../../../calendar/recurrence.ts';
import { WHEN_SCHEMA } from '../fields.ts';
import { EVENT_VIEW_SCHEMA, eventView } from '../model.ts';
import { assertOpen, changeEvent } from '../store.ts';

/** Cancels an event, or removes one occurrence of a repeating one. */
export const cancel = defineTool({
  name: 'calendar_events.cancel',
  description:
    'Cancel a calendar event (it leaves the agenda and frees its time), or with occurrence only that instance of a repeating event ' +
    '(an RFC 5545 EXDATE). An event a booking made is cancelled with bookings.cancel.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, occurrence: WHEN_SCHEMA } },
  output: recordOutput('event', EVENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await changeEvent(ctx.db, ctx.workspace, input.id, ctx.now, (e) => {
      assertOpen(e);
      if (input.occurrence === undefined) return { ...e, status: 'cancelled' };
      if (!e.rrule || !isInstanceOf(e, input.occurrence)) throw new CuadraError('invalid_input', `${input.occurrence} is not an occurrence of this event.`, { field: '/occurrence' });
      if (e.exdates.includes(input.occurrence)) throw new CuadraError('conflict', `The occurrence ${input.occurrence} is already cancelled.`);
      return { ...e, exdates: [...e.exdates, input.occurrence], overrides: e.overrides.filter((o) => o.recurrence_id !== input.occurrence) };
    });
    return { event: eventView(after) };
  },
});
