import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { calendarAccounts, type CalendarAccountDoc } from '../model.ts';
import { syncAccount } from '../sync.ts';

/** Syncs a connected account now. */
export const sync = defineTool({
  name: 'calendar_accounts.sync',
  description:
    'Sync a connected calendar account now: its calendars are found again, and each calendar\'s events are brought up to date — only what changed since ' +
    'the last sync (sync-collection), or by comparing ETags when the server cannot say; deleted events are removed, recurring ones expanded for the next 400 days.',
  risk: 'external',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['calendars'],
    properties: {
      calendars: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['calendar_id', 'method', 'changed', 'deleted', 'skipped'],
          properties: { calendar_id: { type: 'string' }, method: { enum: ['sync-collection', 'etag'] }, changed: { type: 'integer' }, deleted: { type: 'integer' }, skipped: { type: 'integer' } },
        },
      },
    },
  },
  async handler(input, ctx) {
    const account = await calendarAccounts(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean<CalendarAccountDoc>();
    if (!account || account.status === 'removed') throw new CuadraError('not_found', `No calendar account ${input.id} is connected in this workspace.`);
    return syncAccount(ctx.db, account, ctx.now);
  },
});
