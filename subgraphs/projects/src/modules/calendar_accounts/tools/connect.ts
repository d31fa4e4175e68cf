import { createPositioned, CuadraError, defineTool, newId } from '@cuadra/shared';
import { checkOutboundUrl } from '@cuadra/shared/outbound';
import { discover, passwordContext, requireSealer, signIn } from '../dav.ts';
import { ACCOUNT_VIEW_SCHEMA, accountView, CALENDAR_VIEW_SCHEMA, calendarAccounts, calendarView, type CalendarAccountDoc } from '../model.ts';
import { recordCalendars } from '../sync.ts';

/** Connects a CalDAV account: signs in, discovers its calendars, seals the password. */
export const connect = defineTool({
  name: 'calendar_accounts.connect',
  description:
    'Connect a CalDAV calendar account (Fastmail, iCloud, Nextcloud, Radicale, …): the server URL, the user name and the password or app password. ' +
    'Cuadra signs in, finds the account\'s calendars (connected_calendars; the first counts for availability until you choose with calendar_accounts.choose) ' +
    'and syncs their events every 15 minutes (calendar_accounts.sync syncs now). The password is sealed at rest and never shown again. ' +
    'The server must be on a public address.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['url', 'username', 'password'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, description: 'What to call the account (default: the user name at the server\'s host).' },
      url: { type: 'string', minLength: 8, maxLength: 500, description: 'The CalDAV server (e.g. https://caldav.fastmail.com/); discovery finds the calendars from there.' },
      username: { type: 'string', minLength: 1, maxLength: 254 },
      password: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true, description: 'The password or app password. Sealed at rest; never shown again.' },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['account', 'calendars'],
    properties: { account: ACCOUNT_VIEW_SCHEMA, calendars: { type: 'array', items: CALENDAR_VIEW_SCHEMA } },
  },
  async handler(input, ctx) {
    const url = checkOutboundUrl(input.url.trim(), '/url');
    const sealer = requireSealer();
    // Signing in first: an account that does not answer, or refuses the password, is never stored.
    const client = await signIn(`${url}/`, input.username, input.password);
    const found = await discover(client);
    if (found.length === 0) throw new CuadraError('invalid_input', 'The account has no event calendars.', { field: '/url' });
    const id = newId('cac');
    const name = (input.name ?? `${input.username} @ ${new URL(url).host}`).trim();
    const account: CalendarAccountDoc = {
      _id: id, workspace: ctx.workspace, name, name_lc: name.toLowerCase(), url: `${url}/`, username: input.username,
      password_sealed: sealer.seal(input.password, passwordContext(ctx.workspace, id)),
      status: 'connected', last_error: null, last_synced_at: null, next_sync_at: ctx.now, lease_until: null, created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(calendarAccounts(ctx.db), account);
    const calendars = await recordCalendars(ctx.db, account, found, ctx.now);
    return { account: accountView(account), calendars: calendars.map(calendarView) };
  },
});
