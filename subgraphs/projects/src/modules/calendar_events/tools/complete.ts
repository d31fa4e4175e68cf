import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isInstanceOf } from '../../../calendar/recurrence.ts';
import { WHEN_SCHEMA } from '../fields.ts';
import { EVENT_VIEW_SCHEMA, eventView } from '../model.ts';
import { changeEvent } from '../store.ts';

/** Marks an event, or one occurrence, done: an obligation done is no longer overdue. */
export const complete = defineTool({
  name: 'calendar_events.complete',
  description: 'Mark a calendar event done (a tax or legal obligation filed, a deadline met), or with occurrence one instance of a repeating one. Done obligations no longer show as overdue in the agenda.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, occurrence: WHEN_SCHEMA } },
  output: recordOutput('event', EVENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await changeEvent(ctx.db, ctx.workspace, input.id, ctx.now, (e) => {
      if (e.status === 'cancelled' || e.status === 'done') throw new CuadraError('conflict', `The calendar event ${e._id} is ${e.status}.`);
      if (input.occurrence === undefined) return { ...e, status: 'done' };
      const id = input.occurrence;
      if (!e.rrule || !isInstanceOf(e, id) || e.exdates.includes(id)) throw new CuadraError('invalid_input', `${id} is not an occurrence of this event.`, { field: '/occurrence' });
      const prior = e.overrides.find((o) => o.recurrence_id === id);
      if (prior?.status === 'done') throw new CuadraError('conflict', `The occurrence ${id} is already done.`);
      const span = e.all_day ? null : Date.parse(`${e.end_local}:00Z`) - Date.parse(`${e.start_local}:00Z`);
      const end = prior?.end_local ?? (span === null ? id.slice(0, 10) : new Date(Date.parse(`${id}:00Z`) + span).toISOString().slice(0, 16));
      const allDayEnd = e.all_day && !prior ? new Date(Date.parse(`${id}T00:00Z`) + (Date.parse(`${e.end_local}T00:00Z`) - Date.parse(`${e.start_local}T00:00Z`))).toISOString().slice(0, 10) : end;
      e.overrides = [...e.overrides.filter((o) => o.recurrence_id !== id), { recurrence_id: id, start_local: prior?.start_local ?? id, end_local: allDayEnd, title: prior?.title ?? null, status: 'done' }];
      return e;
    });
    return { event: eventView(after) };
  },
});
