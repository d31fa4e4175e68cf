import { CuadraError, newId } from '@cuadra/shared';
import ICAL from 'ical.js';
import type { Connection } from 'mongoose';
import type { CalendarEventDoc } from '../calendar_events/model.ts';
import type { DavClient } from './dav.ts';
import { calendarProposals, calendarPublications, type ConnectedCalendarDoc, type ProposalDoc, type PublicationDoc } from './model.ts';

/**
 * Writing Cuadra's events to a connected calendar. Every write is conditional: the first with
 * `If-None-Match: *` (never over an object already there), later ones with `If-Match` on the ETag
 * the server gave the copy Cuadra wrote (RFC 7232 §3.1–3.2, RFC 4791 §5.3.2). When the copy was
 * changed on the server meanwhile the server answers 412, and the two versions become a proposal a
 * person decides (`calendar_accounts.resolve`) — never last-writer-wins.
 */

function icalLocal(local: string, allDay: boolean): ICAL.Time {
  const [date, time] = local.split('T');
  const [year, month, day] = date.split('-').map(Number);
  if (allDay) return ICAL.Time.fromData({ year, month, day, isDate: true });
  const [hour, minute] = time.split(':').map(Number);
  return ICAL.Time.fromData({ year, month, day, hour, minute, second: 0 });
}

function setTime(comp: ICAL.Component, name: string, local: string, e: CalendarEventDoc, endOfDay = false): void {
  let t = icalLocal(local, e.all_day);
  if (e.all_day && endOfDay) {
    t = t.clone();
    t.adjust(1, 0, 0, 0); // DTEND of a date is exclusive; the stored end date is inclusive
  }
  const p = comp.updatePropertyWithValue(name, t);
  if (!e.all_day) p.setParameter('tzid', e.time_zone);
}

/** The event as an iCalendar object: the series on its zone's wall clock (TZID), its removed and overridden instances. */
export function eventIcs(e: CalendarEventDoc, now: Date): string {
  const cal = new ICAL.Component(['vcalendar', [], []]);
  cal.updatePropertyWithValue('prodid', '-//Cuadra//Calendar//ES');
  cal.updatePropertyWithValue('version', '2.0');
  const base = (comp: ICAL.Component) => {
    comp.updatePropertyWithValue('uid', `${e._id}@cuadra`);
    comp.updatePropertyWithValue('dtstamp', ICAL.Time.fromJSDate(now, true));
    comp.updatePropertyWithValue('sequence', e.rev);
  };
  const master = new ICAL.Component('vevent');
  base(master);
  setTime(master, 'dtstart', e.start_local, e);
  setTime(master, 'dtend', e.end_local, e, true);
  master.updatePropertyWithValue('summary', e.title);
  if (e.description) master.updatePropertyWithValue('description', e.description);
  if (e.location) master.updatePropertyWithValue('location', e.location);
  master.updatePropertyWithValue('status', e.status === 'tentative' ? 'TENTATIVE' : e.status === 'cancelled' ? 'CANCELLED' : 'CONFIRMED');
  if (e.rrule) master.updatePropertyWithValue('rrule', ICAL.Recur.fromString(e.rrule));
  for (const x of e.exdates) {
    const p = master.addPropertyWithValue('exdate', icalLocal(x, e.all_day));
    if (!e.all_day) p.setParameter('tzid', e.time_zone);
  }
  cal.addSubcomponent(master);
  for (const o of e.overrides) {
    const ex = new ICAL.Component('vevent');
    base(ex);
    setTime(ex, 'recurrence-id', o.recurrence_id, e);
    setTime(ex, 'dtstart', o.start_local, e);
    setTime(ex, 'dtend', o.end_local, e, true);
    ex.updatePropertyWithValue('summary', o.title ?? e.title);
    if (o.status === 'cancelled') ex.updatePropertyWithValue('status', 'CANCELLED');
    cal.addSubcomponent(ex);
  }
  return cal.toString();
}

/** What a write answered: written (with the copy's ETag), or a proposal opened. */
export type PublishOutcome = { written: true; href: string; etag: string | null } | { written: false; proposal: ProposalDoc };

/** The object at `href` now (text and ETag), or null when it is not there. */
async function current(client: DavClient, cal: ConnectedCalendarDoc, href: string): Promise<{ ics: string; etag: string | null } | null> {
  const res = await client.calendarMultiGet({ url: cal.url, props: { 'd:getetag': {}, 'c:calendar-data': {} }, objectUrls: [new URL(href).pathname], depth: '1' });
  const r = res.find((x) => x.href && x.status !== 404 && x.props?.calendarData);
  if (!r) return null;
  const data = r.props!.calendarData as unknown;
  const ics = typeof data === 'object' && data !== null && '_cdata' in data ? String((data as { _cdata: unknown })._cdata) : String(data);
  return { ics, etag: r.props?.getetag == null ? null : String(r.props.getetag) };
}

/**
 * One conditional PUT of `ics` at `href`: `If-Match: etag`, or `If-None-Match: *` when Cuadra has no
 * copy there (etag null). 412 opens a proposal with what the server holds; the publication is
 * marked as waiting for it.
 */
export async function conditionalPut(db: Connection, client: DavClient, cal: ConnectedCalendarDoc, e: CalendarEventDoc, href: string, etag: string | null, now: Date): Promise<PublishOutcome> {
  const ics = eventIcs(e, now);
  const headers: Record<string, string> = { 'content-type': 'text/calendar; charset=utf-8', ...(etag ? { 'if-match': etag } : { 'if-none-match': '*' }) };
  const res = await client.createObject({ url: href, data: ics, headers });
  await res.body?.cancel().catch(() => undefined);
  const pubId = `${e._id}|${cal._id}`;
  if (res.status === 412) {
    const theirs = await current(client, cal, href);
    const proposal: ProposalDoc = {
      _id: newId('cpr'), workspace: e.workspace, event_id: e._id, calendar_id: cal._id, href, ours_ics: ics,
      theirs_ics: theirs?.ics ?? null, theirs_etag: theirs?.etag ?? null, status: 'open', created_at: now, decided_at: null,
    };
    await calendarProposals(db).create(proposal);
    await calendarPublications(db).updateOne({ _id: pubId, workspace: e.workspace }, {
      $set: { proposal_id: proposal._id },
      $setOnInsert: { event_id: e._id, calendar_id: cal._id, href, etag: null, rev: 0, written_at: now },
    }, { upsert: true });
    return { written: false, proposal };
  }
  if (res.status < 200 || res.status >= 300) throw new CuadraError('unavailable', `The CalDAV server did not take the event (HTTP ${res.status}); nothing was changed there.`);
  const newEtag = res.headers.get('etag') ?? (await current(client, cal, href))?.etag ?? null;
  const pub: PublicationDoc = { _id: pubId, workspace: e.workspace, event_id: e._id, calendar_id: cal._id, href, etag: newEtag, rev: e.rev, proposal_id: null, written_at: now };
  await calendarPublications(db).replaceOne({ _id: pubId, workspace: e.workspace }, pub, { upsert: true });
  return { written: true, href, etag: newEtag };
}

/** JSON Schema of {@link proposalView}. */
export const PROPOSAL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'event_id', 'calendar_id', 'status', 'ours', 'theirs', 'created_at'],
  properties: {
    id: { type: 'string' }, event_id: { type: 'string' }, calendar_id: { type: 'string' }, status: { enum: ['open', 'kept_cuadra', 'kept_calendar'] },
    ours: { type: 'string', description: 'The iCalendar text Cuadra would write.' },
    theirs: { type: ['string', 'null'], description: 'What the calendar holds now (null: deleted there).' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The public shape of a proposal. */
export function proposalView(p: ProposalDoc) {
  return { id: p._id, event_id: p.event_id, calendar_id: p.calendar_id, status: p.status, ours: p.ours_ics, theirs: p.theirs_ics, created_at: p.created_at.toISOString() };
}
