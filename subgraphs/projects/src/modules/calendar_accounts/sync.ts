import { createHash } from 'node:crypto';
import { createPositioned, CuadraError, releasePosition } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import type { DAVCalendar, DAVResponse } from 'tsdav';
import { absolute, davClientFor, davError, discover, type DavClient } from './dav.ts';
import { parseObject, spansOf } from './expand.ts';
import { calendarAccounts, connectedCalendars, connectedEvents, type CalendarAccountDoc, type ConnectedCalendarDoc, type ConnectedEventDoc } from './model.ts';

/** How far back and ahead occurrences are expanded: a booking window is at most a year. */
export const WINDOW_BACK_DAYS = 1;
export const WINDOW_AHEAD_DAYS = 400;
/** Objects fetched per calendar-multiget. */
const MULTIGET_BATCH = 50;

/** What one calendar's sync found. */
export interface CalendarSyncResult {
  calendar_id: string;
  method: 'sync-collection' | 'etag';
  changed: number;
  deleted: number;
  skipped: number;
}

/** The id of a calendar found on an account: the same calendar URL always gets the same id. */
export function calendarIdOf(workspace: string, accountId: string, url: string): string {
  return `cal_${createHash('sha256').update(`${workspace}\n${accountId}\n${url}`).digest('hex').slice(0, 24)}`;
}

function objectIdOf(calendarId: string, href: string): string {
  return `cce_${createHash('sha256').update(`${calendarId}\n${href}`).digest('hex').slice(0, 24)}`;
}

function textOf(v: unknown): string | null {
  if (v == null) return null;
  if (typeof v === 'object' && '_cdata' in (v as object)) return String((v as { _cdata: unknown })._cdata);
  if (typeof v === 'object' && '_text' in (v as object)) return String((v as { _text: unknown })._text);
  return String(v);
}

/**
 * Records the calendars the account has now: new ones (not counting for availability until a
 * person says so, except the first calendar of an account, its default), renamed ones, and those
 * gone from the server (their events no longer make anyone busy).
 */
export async function recordCalendars(db: Connection, account: CalendarAccountDoc, found: DAVCalendar[], now: Date): Promise<ConnectedCalendarDoc[]> {
  const known = await connectedCalendars(db).find({ workspace: account.workspace, account_id: account._id }).lean<ConnectedCalendarDoc[]>();
  const byId = new Map(known.map((c) => [c._id, c]));
  const seen = new Set<string>();
  for (const [i, c] of found.entries()) {
    const url = absolute(c.url, account.url);
    const id = calendarIdOf(account.workspace, account._id, url);
    seen.add(id);
    const name = (typeof c.displayName === 'string' && c.displayName.trim()) || decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? url);
    const color = typeof c.calendarColor === 'string' ? c.calendarColor : null;
    const syncCollection = (c.reports ?? []).includes('syncCollection');
    const have = byId.get(id);
    if (have) {
      await connectedCalendars(db).updateOne({ _id: id, workspace: account.workspace }, { $set: { name, name_lc: name.toLowerCase(), color, sync_collection: syncCollection, gone: false, updated_at: now } });
      continue;
    }
    const doc: ConnectedCalendarDoc = {
      _id: id, workspace: account.workspace, account_id: account._id, url, name, name_lc: name.toLowerCase(), color,
      counts_for_availability: known.length === 0 && i === 0, sync_collection: syncCollection, sync_token: null,
      window_from: null, window_to: null, last_synced_at: null, last_sync_method: null, gone: false, created_at: now, updated_at: now,
    };
    await createPositioned(connectedCalendars(db), doc).catch((err: { code?: number }) => {
      if (err.code !== 11000) throw err; // another sync recorded it meanwhile
    });
  }
  for (const c of known) {
    if (!seen.has(c._id) && !c.gone) await connectedCalendars(db).updateOne({ _id: c._id, workspace: account.workspace }, { $set: { gone: true, sync_token: null, updated_at: now } });
  }
  return connectedCalendars(db).find({ workspace: account.workspace, account_id: account._id, gone: false }).lean<ConnectedCalendarDoc[]>();
}

/** The hrefs and ETags the calendar holds now (PROPFIND Depth 1 of getetag): the fallback when sync-collection cannot be used. */
async function listEtags(client: DavClient, cal: ConnectedCalendarDoc): Promise<Map<string, string | null>> {
  const res = await client.propfind({ url: cal.url, props: { 'd:getetag': {}, 'd:resourcetype': {} }, depth: '1' });
  const out = new Map<string, string | null>();
  for (const r of res) {
    if (!r.href) continue;
    const href = absolute(r.href, cal.url);
    if (href === cal.url || r.status === 404 || r.props?.resourcetype?.collection !== undefined) continue;
    out.set(href, r.props?.getetag == null ? null : String(r.props.getetag));
  }
  return out;
}

async function currentSyncToken(client: DavClient, cal: ConnectedCalendarDoc): Promise<string | null> {
  const res = await client.propfind({ url: cal.url, props: { 'd:sync-token': {} }, depth: '0' });
  const token = res.find((r) => r.ok)?.props?.syncToken;
  return token == null ? null : String(token);
}

/** The changes since the calendar's sync token, or null when the server no longer accepts the token (RFC 6578 §3.2: valid-sync-token). */
async function changesSince(client: DavClient, cal: ConnectedCalendarDoc, token: string): Promise<{ changed: Map<string, string | null>; deleted: string[]; token: string | null } | null> {
  const res: DAVResponse[] = await client.syncCollection({ url: cal.url, props: { 'd:getetag': {} }, syncLevel: 1, syncToken: token as never });
  const failed = res.find((r) => !r.ok && r.status >= 400 && (!r.href || absolute(r.href, cal.url) === cal.url));
  if (failed) {
    if (failed.status === 403 || failed.status === 409 || failed.status === 400) return null;
    throw new Error(`sync-collection answered ${failed.status}`);
  }
  const changed = new Map<string, string | null>();
  const deleted: string[] = [];
  for (const r of res) {
    if (!r.href) continue;
    const href = absolute(r.href, cal.url);
    if (href === cal.url) continue;
    if (r.status === 404) deleted.push(href);
    else changed.set(href, r.props?.getetag == null ? null : String(r.props.getetag));
  }
  const next = (res[0]?.raw as { multistatus?: { syncToken?: unknown } } | undefined)?.multistatus?.syncToken;
  return { changed, deleted, token: next == null ? null : String(next) };
}

async function fetchObjects(client: DavClient, cal: ConnectedCalendarDoc, hrefs: string[]): Promise<{ href: string; etag: string | null; ics: string | null }[]> {
  const out: { href: string; etag: string | null; ics: string | null }[] = [];
  for (let i = 0; i < hrefs.length; i += MULTIGET_BATCH) {
    const batch = hrefs.slice(i, i + MULTIGET_BATCH);
    const res = await client.calendarMultiGet({ url: cal.url, props: { 'd:getetag': {}, 'c:calendar-data': {} }, objectUrls: batch.map((h) => new URL(h).pathname), depth: '1' });
    for (const r of res) {
      if (!r.href) continue;
      out.push({ href: absolute(r.href, cal.url), etag: r.props?.getetag == null ? null : String(r.props.getetag), ics: r.status === 404 ? null : textOf(r.props?.calendarData) });
    }
  }
  return out;
}

/** Writes one object as read (created, or replaced when its ETag changed); false when it holds no event. */
async function storeObject(db: Connection, cal: ConnectedCalendarDoc, href: string, etag: string | null, ics: string, window: { from: Date; to: Date }, now: Date): Promise<boolean> {
  const parsed = parseObject(ics);
  const id = objectIdOf(cal._id, href);
  if (!parsed) {
    await removeObject(db, cal, id);
    return false;
  }
  const spans = spansOf(parsed, window.from, window.to);
  const fields = {
    account_id: cal.account_id, calendar_id: cal._id, href, etag, uid: parsed.uid, title: parsed.title, title_lc: parsed.title.toLowerCase(), status: parsed.status,
    all_day: parsed.all_day, start: parsed.start, end: parsed.end, rrule: parsed.rrule, transparent: parsed.transparent, spans,
    span_from: spans[0]?.start ?? null, span_to: spans.length ? new Date(Math.max(...spans.map((s) => s.end.getTime()))) : null, ics, synced_at: now,
  };
  const updated = await connectedEvents(db).updateOne({ _id: id, workspace: cal.workspace }, { $set: fields });
  if (updated.matchedCount === 1) return true;
  try {
    await createPositioned(connectedEvents(db), { _id: id, workspace: cal.workspace, ...fields } as ConnectedEventDoc);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    await connectedEvents(db).updateOne({ _id: id, workspace: cal.workspace }, { $set: fields });
  }
  return true;
}

async function removeObject(db: Connection, cal: ConnectedCalendarDoc, id: string): Promise<boolean> {
  const gone = await connectedEvents(db).deleteOne({ _id: id, workspace: cal.workspace });
  if (gone.deletedCount === 1) await releasePosition(db, 'connected_calendar_events', cal.workspace);
  return gone.deletedCount === 1;
}

/**
 * Brings one calendar's events up to date. With a sync token, asks only for what changed since
 * (RFC 6578 sync-collection) — changed objects fetched by calendar-multiget, removed ones deleted;
 * when the server refuses the token, or offers no sync-collection, lists every object's ETag and
 * fetches those whose ETag differs (deletions: what it no longer lists). The token is stored only
 * after the changes are: a sync cut short is repeated from the old token, and writing an object
 * twice is harmless. When the expansion window has moved on, unchanged series are re-expanded.
 */
export async function syncCalendar(db: Connection, client: DavClient, cal: ConnectedCalendarDoc, now: Date): Promise<CalendarSyncResult> {
  const window = { from: new Date(now.getTime() - WINDOW_BACK_DAYS * 86_400_000), to: new Date(now.getTime() + WINDOW_AHEAD_DAYS * 86_400_000) };
  let method: CalendarSyncResult['method'] = 'etag';
  let changed = new Map<string, string | null>();
  let deleted: string[] = [];
  let token: string | null = null;
  const delta = cal.sync_collection && cal.sync_token ? await changesSince(client, cal, cal.sync_token) : null;
  if (delta) {
    method = 'sync-collection';
    ({ changed, deleted, token } = delta);
  } else {
    // The token is read before the listing: a change made in between is reported again next time, never missed.
    if (cal.sync_collection) token = await currentSyncToken(client, cal);
    const listed = await listEtags(client, cal);
    const stored = await connectedEvents(db).find({ workspace: cal.workspace, calendar_id: cal._id }, { href: 1, etag: 1 }).lean<Pick<ConnectedEventDoc, 'href' | 'etag'>[]>();
    const have = new Map(stored.map((o) => [o.href, o.etag]));
    for (const [href, etag] of listed) if (etag === null || have.get(href) !== etag) changed.set(href, etag);
    deleted = stored.filter((o) => !listed.has(o.href)).map((o) => o.href);
  }
  let changedCount = 0;
  let skipped = 0;
  const touched = new Set<string>();
  for (const o of await fetchObjects(client, cal, [...changed.keys()])) {
    touched.add(o.href);
    if (o.ics === null) {
      deleted.push(o.href);
      continue;
    }
    if (await storeObject(db, cal, o.href, o.etag, o.ics, window, now)) changedCount++;
    else skipped++;
  }
  let deletedCount = 0;
  for (const href of new Set(deleted)) if (await removeObject(db, cal, objectIdOf(cal._id, href))) deletedCount++;
  // A window that moved more than a week since the last expansion: re-expand what did not change.
  const moved = !cal.window_to || cal.window_to.getTime() < window.to.getTime() - 7 * 86_400_000;
  if (moved) {
    const rest = await connectedEvents(db).find({ workspace: cal.workspace, calendar_id: cal._id }).lean<ConnectedEventDoc[]>();
    for (const o of rest) if (!touched.has(o.href)) await storeObject(db, cal, o.href, o.etag, o.ics, window, now);
  }
  await connectedCalendars(db).updateOne({ _id: cal._id, workspace: cal.workspace }, {
    $set: { sync_token: token, last_synced_at: now, last_sync_method: method, updated_at: now, ...(moved ? { window_from: window.from, window_to: window.to } : {}) },
  });
  return { calendar_id: cal._id, method, changed: changedCount, deleted: deletedCount, skipped };
}

/** How long one sync may hold an account before another may take it (a crashed sync's hold lapses). */
const LEASE_MS = 5 * 60_000;
/** How often the background sweep syncs each account. */
export const SYNC_EVERY_MS = 15 * 60_000;

/**
 * Syncs an account: its calendars found again, then each calendar's events. Holds the account by
 * a lease so two syncs (a person's and the sweep's) never interleave; `conflict` when one runs.
 * A failure is recorded on the account (`failing`, with the reason) and thrown.
 */
export async function syncAccount(db: Connection, account: CalendarAccountDoc, now: Date): Promise<{ calendars: CalendarSyncResult[] }> {
  const held = await calendarAccounts(db).updateOne(
    { _id: account._id, workspace: account.workspace, status: { $ne: 'removed' }, $or: [{ lease_until: null }, { lease_until: { $lte: now } }] },
    { $set: { lease_until: new Date(now.getTime() + LEASE_MS) } },
  );
  if (held.matchedCount !== 1) throw new CuadraError('conflict', `Calendar account ${account._id} is being synced now (or was removed); try again in a moment.`);
  try {
    const client = await davClientFor(account);
    const calendars = await recordCalendars(db, account, await discover(client), now);
    const results: CalendarSyncResult[] = [];
    for (const cal of calendars) {
      try {
        results.push(await syncCalendar(db, client, cal, now));
      } catch (err) {
        throw davError(err, `sync the calendar ${cal.name}`);
      }
    }
    await calendarAccounts(db).updateOne({ _id: account._id, workspace: account.workspace }, {
      $set: { status: 'connected', last_error: null, last_synced_at: now, next_sync_at: new Date(now.getTime() + SYNC_EVERY_MS), lease_until: null, updated_at: now },
    });
    return { calendars: results };
  } catch (err) {
    const e = err instanceof CuadraError ? err : davError(err, 'sync');
    await calendarAccounts(db).updateOne({ _id: account._id, workspace: account.workspace, status: { $ne: 'removed' } }, {
      $set: { status: 'failing', last_error: e.message.slice(0, 300), next_sync_at: new Date(now.getTime() + SYNC_EVERY_MS), lease_until: null, updated_at: now },
    });
    throw e;
  }
}

/** The background sync: accounts whose turn has come, a few per pass. */
export async function syncDueAccounts(db: Connection, now: Date, log: { warn(o: object, m: string): void }): Promise<number> {
  const due = await calendarAccounts(db).find({ next_sync_at: { $ne: null, $lte: now }, status: { $ne: 'removed' } }).limit(10).lean<CalendarAccountDoc[]>();
  let synced = 0;
  for (const a of due) {
    try {
      await syncAccount(db, a, now);
      synced++;
    } catch (err) {
      log.warn({ account: a._id, code: (err as CuadraError).code }, 'calendar account sync failed');
    }
  }
  return synced;
}

/** The busy times of the workspace's calendars that count for availability, overlapping [from, to). */
export async function connectedBusy(db: Connection, workspace: string, from: Date, to: Date): Promise<{ start: number; end: number }[]> {
  const cals = await connectedCalendars(db).find({ workspace, counts_for_availability: true, gone: false }, { _id: 1 }).lean<{ _id: string }[]>();
  if (cals.length === 0) return [];
  const objects = await connectedEvents(db).find(
    { workspace, calendar_id: { $in: cals.map((c) => c._id) }, span_from: { $lt: to }, span_to: { $gt: from } },
    { spans: 1 },
  ).lean<Pick<ConnectedEventDoc, 'spans'>[]>();
  const out: { start: number; end: number }[] = [];
  for (const o of objects) {
    for (const s of o.spans) if (s.busy && s.start < to && s.end > from) out.push({ start: s.start.getTime(), end: s.end.getTime() });
  }
  return out;
}
