import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, accountView, calendarAccounts, connectedCalendars, type CalendarAccountDoc } from '../model.ts';

/** Disconnects an account: its password is forgotten and its calendars stop counting. */
export const remove = defineTool({
  name: 'calendar_accounts.remove',
  description: 'Disconnect a calendar account: its sealed password is erased, syncing stops and its calendars no longer count for availability. Nothing on the server is touched.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const a = await calendarAccounts(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: { $ne: 'removed' } },
      { $set: { status: 'removed', password_sealed: '', next_sync_at: null, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean<CalendarAccountDoc>();
    if (!a) throw new CuadraError('not_found', `No calendar account ${input.id} is connected in this workspace.`);
    await connectedCalendars(ctx.db).updateMany({ workspace: ctx.workspace, account_id: a._id }, { $set: { gone: true, counts_for_availability: false, updated_at: ctx.now } });
    return { account: accountView(a) };
  },
});
