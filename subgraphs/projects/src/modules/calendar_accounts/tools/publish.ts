import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { calendarEvents, type CalendarEventDoc } from '../../calendar_events/model.ts';
import { davClientFor, davError } from '../dav.ts';
import { calendarAccounts, calendarPublications, calendarProposals, connectedCalendars, type CalendarAccountDoc, type ConnectedCalendarDoc, type PublicationDoc, type ProposalDoc } from '../model.ts';
import { conditionalPut, PROPOSAL_VIEW_SCHEMA, proposalView } from '../publish.ts';

/** Writes a Cuadra event to a connected calendar, guarded by If-Match. */
export const publish = defineTool({
  name: 'calendar_accounts.publish',
  description:
    'Write a Cuadra calendar event to a connected calendar (again after it changed). The write is conditional on the copy Cuadra wrote last (If-Match): ' +
    'if someone changed or deleted that copy on the server since, nothing is overwritten — the answer is a proposal with both versions, decided with calendar_accounts.resolve.',
  risk: 'external',
  input: { type: 'object', additionalProperties: false, required: ['event_id', 'calendar_id'], properties: { event_id: ID_SCHEMA, calendar_id: ID_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['written'],
    properties: { written: { type: 'boolean' }, href: { type: 'string' }, proposal: PROPOSAL_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    const event = await calendarEvents(ctx.db).findOne({ _id: input.event_id, workspace: ctx.workspace }).lean<CalendarEventDoc>();
    if (!event) throw new CuadraError('invalid_input', `No calendar event ${input.event_id} exists in this workspace.`, { field: '/event_id' });
    const cal = await connectedCalendars(ctx.db).findOne({ _id: input.calendar_id, workspace: ctx.workspace, gone: false }).lean<ConnectedCalendarDoc>();
    if (!cal) throw new CuadraError('invalid_input', `No connected calendar ${input.calendar_id} exists in this workspace.`, { field: '/calendar_id' });
    const account = await calendarAccounts(ctx.db).findOne({ _id: cal.account_id, workspace: ctx.workspace, status: { $ne: 'removed' } }).lean<CalendarAccountDoc>();
    if (!account) throw new CuadraError('invalid_input', `The account of calendar ${cal._id} was removed.`, { field: '/calendar_id' });
    const pub = await calendarPublications(ctx.db).findOne({ _id: `${event._id}|${cal._id}`, workspace: ctx.workspace }).lean<PublicationDoc>();
    if (pub?.proposal_id) {
      const open = await calendarProposals(ctx.db).findOne({ _id: pub.proposal_id, workspace: ctx.workspace }).lean<ProposalDoc>();
      if (open?.status === 'open') throw new CuadraError('conflict', `The copy on ${cal.name} changed there and proposal ${open._id} waits for a decision (calendar_accounts.resolve); nothing was written.`);
    }
    const href = pub?.href ?? new URL(`${encodeURIComponent(event._id)}.ics`, cal.url).href;
    try {
      const outcome = await conditionalPut(ctx.db, await davClientFor(account), cal, event, href, pub?.etag ?? null, ctx.now);
      return outcome.written ? { written: true, href: outcome.href } : { written: false, href, proposal: proposalView(outcome.proposal) };
    } catch (err) {
      throw davError(err, 'write the event');
    }
  },
});
