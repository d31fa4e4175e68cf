import { CuadraError, sealerFromEnv } from '@cuadra/shared';
import { outboundFetch } from '@cuadra/shared/outbound';
import { createDAVClient, type DAVCalendar } from 'tsdav';
import type { CalendarAccountDoc } from './model.ts';

/*
 * The CalDAV side, over tsdav: discovery (RFC 4791 §7.1, RFC 6764's well-known URL), sync-collection
 * (RFC 6578), ETag listings, calendar-multiget, and conditional PUTs. Every request goes through the
 * guarded outbound fetch: http(s) to public addresses only (checked again on every request, so an
 * href the server answers cannot lead the client to a private address), loopback only when the
 * deployment allows it (`CUADRA_OUTBOUND_PRIVATE=allow`: the tests' Radicale).
 */

/** Context a sealed password is bound to (it opens for no other account). */
export function passwordContext(workspace: string, id: string): string {
  return `calendar_accounts.password:${workspace}:${id}`;
}

/** The deployment's sealer; `unavailable` before any effect when none is configured. */
export function requireSealer() {
  const sealer = sealerFromEnv();
  if (!sealer) throw new CuadraError('unavailable', 'This deployment has no seal key (CUADRA_SEAL_KEY), so a calendar password cannot be kept; nothing was stored.', { beforeAnyEffect: true });
  return sealer;
}

/** A signed-in CalDAV client of tsdav. */
export type DavClient = Awaited<ReturnType<typeof createDAVClient>>;

/** A client signed in as the account (its password opened for this call only, never kept). */
export async function davClientFor(account: Pick<CalendarAccountDoc, '_id' | 'workspace' | 'url' | 'username' | 'password_sealed'>): Promise<DavClient> {
  const password = requireSealer().open(account.password_sealed, passwordContext(account.workspace, account._id));
  if (password === null) throw new CuadraError('conflict', `The password of calendar account ${account._id} cannot be opened with this deployment's seal key; connect the account again.`);
  return signIn(account.url, account.username, password);
}

/** Signs in (discovers the principal and the calendar home); a refusal by the server is `invalid_input` at /password, an unreachable one `unavailable`. */
export async function signIn(url: string, username: string, password: string): Promise<DavClient> {
  try {
    return await createDAVClient({ serverUrl: url, credentials: { username, password }, authMethod: 'Basic', defaultAccountType: 'caldav', fetch: outboundFetch() });
  } catch (err) {
    throw davError(err, 'sign in');
  }
}

/** The account's event calendars. */
export async function discover(client: DavClient): Promise<DAVCalendar[]> {
  try {
    const all = await client.fetchCalendars();
    return all.filter((c) => !c.components || c.components.includes('VEVENT'));
  } catch (err) {
    throw davError(err, 'list the calendars');
  }
}

/** A CalDAV failure as the caller should see it. */
export function davError(err: unknown, doing: string): CuadraError {
  if (err instanceof CuadraError) return err;
  const text = String((err as Error)?.message ?? err);
  if (/401|403|unauthori[sz]ed|forbidden|invalid credentials/i.test(text)) {
    return new CuadraError('invalid_input', `The CalDAV server refused the user name or password when asked to ${doing}.`, { field: '/password' });
  }
  if (/EPRIVATEADDR|not public/i.test(text)) return new CuadraError('invalid_input', 'The CalDAV server is on an address that is not public.', { field: '/url' });
  // The server's own text is not passed on: it may echo anything.
  const status = /\b([45]\d\d)\b/.exec(text)?.[1];
  return new CuadraError('unavailable', `The CalDAV server could not ${doing}${status ? ` (HTTP ${status})` : ''}; try again later.`);
}

/** An href resolved against the collection's URL. */
export function absolute(href: string, base: string): string {
  return new URL(href, base).href;
}
