import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { isInstanceOf, type OccurrenceOverride } from '../../../calendar/recurrence.ts';
import { localToInstant } from '../../../calendar/time.ts';
import { attendeesOf, EVENT_FIELDS, resolveWhen, WHEN_SCHEMA } from '../fields.ts';
import { EVENT_VIEW_SCHEMA, eventView } from '../model.ts';
import { checkParties } from '../parties.ts';
import { assertOpen, changeEvent } from '../store.ts';

const { kind: _kind, ...FIELDS } = EVENT_FIELDS;

/** Changes an event, or one occurrence of a repeating one. */
export const update = defineTool({
  name: 'calendar_events.update',
  description:
    'Change a calendar event: the fields given replace the stored ones (rrule null stops the repetition). With occurrence (the original start of ' +
    'one instance of a repeating event, YYYY-MM-DDTHH:mm or YYYY-MM-DD) only that instance changes — its start, end, title or status — ' +
    'as an RFC 5545 overridden instance (RECURRENCE-ID). Done, cancelled and booking events are refused (conflict).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, occurrence: WHEN_SCHEMA, ...FIELDS, kind: EVENT_FIELDS.kind, rrule: { anyOf: [EVENT_FIELDS.rrule, { type: 'null' }] } },
  },
  output: recordOutput('event', EVENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const attendees = input.attendees ? attendeesOf(input.attendees) : undefined;
    if (attendees) await checkParties(ctx, attendees);
    const after = await changeEvent(ctx.db, ctx.workspace, input.id, ctx.now, (e) => {
      assertOpen(e);
      if (input.occurrence !== undefined) {
        const id = input.occurrence;
        const allowed = new Set(['id', 'occurrence', 'start', 'end', 'title', 'status']);
        const other = Object.keys(input).find((k) => !allowed.has(k));
        if (other) throw new CuadraError('invalid_input', 'One occurrence changes only its start, end, title or status.', { field: `/${other}` });
        if (!e.rrule || !isInstanceOf(e, id) || e.exdates.includes(id)) throw new CuadraError('invalid_input', `${id} is not an occurrence of this event.`, { field: '/occurrence' });
        const prior = e.overrides.find((o) => o.recurrence_id === id);
        const span = Date.parse(`${e.end_local.length > 10 ? `${e.end_local}:00` : e.end_local}Z`) - Date.parse(`${e.start_local.length > 10 ? `${e.start_local}:00` : e.start_local}Z`);
        const start = input.start ?? prior?.start_local ?? id;
        const end = input.end ?? prior?.end_local ?? (e.all_day ? new Date(Date.parse(`${start}T00:00Z`) + span).toISOString().slice(0, 10) : new Date(Date.parse(`${start}:00Z`) + span).toISOString().slice(0, 16));
        // The instance keeps the series' form (dates all day, local times otherwise) and must exist in its zone.
        resolveWhen({ all_day: e.all_day, time_zone: e.time_zone, start, end });
        if (!e.all_day) localToInstant(start, e.time_zone, '/start');
        const override: OccurrenceOverride = { recurrence_id: id, start_local: start, end_local: end, title: input.title ?? prior?.title ?? null, status: input.status ?? prior?.status ?? null };
        e.overrides = [...e.overrides.filter((o) => o.recurrence_id !== id), override];
        return e;
      }
      const when = resolveWhen({
        all_day: input.all_day ?? e.all_day,
        time_zone: input.time_zone ?? e.time_zone,
        start: input.start ?? e.start_local,
        end: input.end ?? (input.start !== undefined || input.all_day !== undefined ? undefined : e.end_local),
        rrule: input.rrule === undefined ? e.rrule : input.rrule,
        exdates: input.exdates ?? (input.rrule === null ? [] : e.exdates),
      }, e.overrides);
      // Overridden instances the new rule no longer makes are dropped, as calendar clients do.
      when.overrides = when.rrule ? e.overrides.filter((o) => isInstanceOf(when, o.recurrence_id)) : [];
      return {
        ...e, ...when,
        title: input.title?.trim() ?? e.title,
        title_lc: (input.title?.trim() ?? e.title).toLowerCase(),
        description: input.description ?? e.description,
        location: input.location ?? e.location,
        kind: input.kind ?? e.kind,
        status: input.status ?? e.status,
        attendees: attendees ?? e.attendees,
        reminders: input.reminders ? [...input.reminders].sort((a, b) => b - a) : e.reminders,
      };
    });
    return { event: eventView(after) };
  },
});
