import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { calendarEvents, type CalendarEventDoc } from '../../calendar_events/model.ts';
import { davClientFor, davError } from '../dav.ts';
import { calendarAccounts, calendarProposals, calendarPublications, connectedCalendars, type CalendarAccountDoc, type ConnectedCalendarDoc, type ProposalDoc } from '../model.ts';
import { conditionalPut, PROPOSAL_VIEW_SCHEMA, proposalView } from '../publish.ts';

/** Decides a proposal: Cuadra's version written over the calendar's (still conditionally), or the calendar's kept. */
export const resolve = defineTool({
  name: 'calendar_accounts.resolve',
  description:
    'Decide a proposal opened when a calendar copy of a Cuadra event changed on the server: keep "cuadra" writes Cuadra\'s version over exactly the version ' +
    'the proposal showed (If-Match on it; a newer change there opens a new proposal), keep "calendar" leaves the calendar\'s version in place and writes no more until the event changes again.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['proposal_id', 'keep'],
    properties: { proposal_id: ID_SCHEMA, keep: { enum: ['cuadra', 'calendar'] } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['proposal'],
    properties: { proposal: PROPOSAL_VIEW_SCHEMA, next_proposal: PROPOSAL_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    const p = await calendarProposals(ctx.db).findOne({ _id: input.proposal_id, workspace: ctx.workspace }).lean<ProposalDoc>();
    if (!p) throw new CuadraError('invalid_input', `No proposal ${input.proposal_id} exists in this workspace.`, { field: '/proposal_id' });
    if (p.status !== 'open') throw new CuadraError('conflict', `Proposal ${p._id} was already decided (${p.status}).`);
    const pubId = `${p.event_id}|${p.calendar_id}`;
    let next: ProposalDoc | null = null;
    if (input.keep === 'cuadra') {
      const event = await calendarEvents(ctx.db).findOne({ _id: p.event_id, workspace: ctx.workspace }).lean<CalendarEventDoc>();
      const cal = await connectedCalendars(ctx.db).findOne({ _id: p.calendar_id, workspace: ctx.workspace }).lean<ConnectedCalendarDoc>();
      const account = cal && await calendarAccounts(ctx.db).findOne({ _id: cal.account_id, workspace: ctx.workspace, status: { $ne: 'removed' } }).lean<CalendarAccountDoc>();
      if (!event || !cal || !account) throw new CuadraError('conflict', 'The event, the calendar or its account is gone; the proposal cannot be carried out.');
      let outcome;
      try {
        outcome = await conditionalPut(ctx.db, await davClientFor(account), cal, event, p.href, p.theirs_etag, ctx.now);
      } catch (err) {
        throw davError(err, 'write the event');
      }
      if (!outcome.written) next = outcome.proposal;
    } else {
      // The calendar's version stands: Cuadra's copy is now that one, so the next write is guarded by its ETag.
      await calendarPublications(ctx.db).updateOne({ _id: pubId, workspace: ctx.workspace, proposal_id: p._id }, { $set: { etag: p.theirs_etag, proposal_id: null } });
    }
    const decided = await calendarProposals(ctx.db).findOneAndUpdate(
      { _id: p._id, workspace: ctx.workspace, status: 'open' },
      { $set: { status: input.keep === 'cuadra' ? 'kept_cuadra' : 'kept_calendar', decided_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean<ProposalDoc>();
    if (!decided) throw new CuadraError('conflict', `Proposal ${p._id} was decided meanwhile.`);
    return { proposal: proposalView(decided), ...(next ? { next_proposal: proposalView(next) } : {}) };
  },
});
