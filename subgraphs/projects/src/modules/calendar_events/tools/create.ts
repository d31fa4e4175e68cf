import { createPositioned, defineTool, newId, recordOutput } from '@cuadra/shared';
import { attendeesOf, EVENT_FIELDS, resolveWhen } from '../fields.ts';
import { calendarEvents, EVENT_VIEW_SCHEMA, eventView, type CalendarEventDoc } from '../model.ts';
import { checkParties } from '../parties.ts';
import { scheduled } from '../reminders.ts';
import { fileEvent } from '../store.ts';

/** Adds an event to the workspace's calendar. */
export const create = defineTool({
  name: 'calendar_events.create',
  description:
    'Add a calendar event: title, kind (legal, tax, compliance, deadline, meeting, reminder, event), status (confirmed or tentative), ' +
    'start and end as local times YYYY-MM-DDTHH:mm in time_zone (IANA, default America/Bogota) — or dates with all_day —, an optional ' +
    'RFC 5545 rrule (FREQ=WEEKLY;BYDAY=MO) with exdates (occurrences removed, written as the start is), attendees (e-mail, name, crm party_id) ' +
    'and reminders (minutes before each occurrence, e-mailed to the attendees). Answers the event with its UTC start and end.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['title', 'kind', 'start'],
    properties: EVENT_FIELDS,
  },
  output: recordOutput('event', EVENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const when = resolveWhen(input);
    const attendees = attendeesOf(input.attendees);
    await checkParties(ctx, attendees);
    const doc: CalendarEventDoc = scheduled({
      _id: newId('evt'),
      workspace: ctx.workspace,
      title: input.title.trim(),
      title_lc: input.title.trim().toLowerCase(),
      description: input.description ?? null,
      location: input.location ?? null,
      kind: input.kind,
      status: input.status ?? 'confirmed',
      ...when,
      attendees,
      reminders: [...(input.reminders ?? [])].sort((a, b) => b - a),
      source: 'cuadra',
      booking_id: null,
      rev: 1,
      created_at: ctx.now,
      updated_at: ctx.now,
    }, ctx.now);
    await fileEvent(ctx.db, doc);
    await createPositioned(calendarEvents(ctx.db), doc);
    return { event: eventView(doc) };
  },
});
