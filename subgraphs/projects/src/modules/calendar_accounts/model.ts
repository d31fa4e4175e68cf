import { addPositions, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Account statuses: last sync worked, or failed (its `last_error` says why), or removed. */
export const ACCOUNT_STATUSES = ['connected', 'failing', 'removed'] as const;

/** A CalDAV account a workspace connected: where it is, who signs in, and the password sealed. */
export interface CalendarAccountDoc {
  _id: string;
  workspace: string;
  name: string;
  name_lc: string;
  /** The CalDAV server's URL the account was discovered from (no credentials in it). */
  url: string;
  username: string;
  /** The password or app password, sealed with the deployment's seal key and bound to this account. */
  password_sealed: string;
  status: (typeof ACCOUNT_STATUSES)[number];
  last_error: string | null;
  last_synced_at: Date | null;
  /** When the background sweep syncs it next. */
  next_sync_at: Date | null;
  /** A sync holds the account until this instant (a crashed sync's hold lapses). */
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const accountSchema = new Schema<CalendarAccountDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, name: String, name_lc: String, url: String, username: String,
  password_sealed: String, status: String, last_error: { type: String, default: null }, last_synced_at: { type: Date, default: null },
  next_sync_at: { type: Date, default: null }, lease_until: { type: Date, default: null }, created_at: Date, updated_at: Date,
}, { versionKey: false });
accountSchema.index({ next_sync_at: 1 });
addPositions(accountSchema);

/** The calendar_accounts collection (source `calendar_accounts`). */
export function calendarAccounts(db: Connection): Model<CalendarAccountDoc> {
  return modelOn<CalendarAccountDoc>(db, 'CalendarAccount', accountSchema, 'calendar_accounts');
}

/** A calendar found on a connected account. */
export interface ConnectedCalendarDoc {
  _id: string;
  workspace: string;
  account_id: string;
  /** The collection's absolute URL on the server. */
  url: string;
  name: string;
  name_lc: string;
  color: string | null;
  /** Whether its events make the workspace busy for bookings. */
  counts_for_availability: boolean;
  /** Whether the server offers `sync-collection` (RFC 6578); else changes are found by comparing ETags. */
  sync_collection: boolean;
  /** The server's sync token after the last sync (null before the first, or after the server refused it). */
  sync_token: string | null;
  /** Occurrences of its events are expanded within [from, to): a sync re-expands them when the window has moved on. */
  window_from: Date | null;
  window_to: Date | null;
  last_synced_at: Date | null;
  /** How the last sync found the changes. */
  last_sync_method: 'sync-collection' | 'etag' | null;
  /** Set when the calendar is no longer on the server. */
  gone: boolean;
  created_at: Date;
  updated_at: Date;
}

const calendarSchema = new Schema<ConnectedCalendarDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, account_id: String, url: String, name: String, name_lc: String,
  color: { type: String, default: null }, counts_for_availability: Boolean, sync_collection: Boolean, sync_token: { type: String, default: null },
  window_from: { type: Date, default: null }, window_to: { type: Date, default: null }, last_synced_at: { type: Date, default: null },
  last_sync_method: { type: String, default: null }, gone: { type: Boolean, default: false }, created_at: Date, updated_at: Date,
}, { versionKey: false });
calendarSchema.index({ workspace: 1, account_id: 1 });
calendarSchema.index({ workspace: 1, counts_for_availability: 1 });
addPositions(calendarSchema);

/** The connected_calendars collection. */
export function connectedCalendars(db: Connection): Model<ConnectedCalendarDoc> {
  return modelOn<ConnectedCalendarDoc>(db, 'ConnectedCalendar', calendarSchema, 'connected_calendars');
}

/** One busy or free stretch of a synced event, an occurrence within the calendar's window. */
export interface SyncedSpan { start: Date; end: Date; busy: boolean }

/**
 * One calendar object (a `.ics` resource: an event, its series and overridden instances) as the
 * server had it at the last sync, with its occurrences expanded for the calendar's window.
 */
export interface ConnectedEventDoc {
  _id: string;
  workspace: string;
  account_id: string;
  calendar_id: string;
  /** The object's href on the server, and its ETag when it was read. */
  href: string;
  etag: string | null;
  uid: string;
  title: string;
  title_lc: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  all_day: boolean;
  /** The series' first start and end. */
  start: Date;
  end: Date;
  rrule: string | null;
  /** TRANSP:TRANSPARENT events do not make anyone busy. */
  transparent: boolean;
  /** Occurrences within the calendar's window, in order. */
  spans: SyncedSpan[];
  /** First start and last end of `spans`: what availability reads by. */
  span_from: Date | null;
  span_to: Date | null;
  /** The object's iCalendar text as read (re-expanded when the window moves). */
  ics: string;
  synced_at: Date;
}

const eventSchema = new Schema<ConnectedEventDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, account_id: String, calendar_id: String, href: String,
  etag: { type: String, default: null }, uid: String, title: String, title_lc: String, status: String, all_day: Boolean, start: Date, end: Date,
  rrule: { type: String, default: null }, transparent: Boolean, spans: { type: [{ _id: false, start: Date, end: Date, busy: Boolean }], default: [] },
  span_from: { type: Date, default: null }, span_to: { type: Date, default: null }, ics: String, synced_at: Date,
}, { versionKey: false });
eventSchema.index({ workspace: 1, calendar_id: 1, href: 1 }, { unique: true });
eventSchema.index({ workspace: 1, calendar_id: 1, span_from: 1 });
addPositions(eventSchema);

/** The connected_calendar_events collection. */
export function connectedEvents(db: Connection): Model<ConnectedEventDoc> {
  return modelOn<ConnectedEventDoc>(db, 'ConnectedCalendarEvent', eventSchema, 'connected_calendar_events');
}

/**
 * Where a Cuadra event was written on a connected calendar: the href and the ETag the server gave
 * the copy, and the event's rev it carries. The next write is conditional on that ETag (`If-Match`).
 */
export interface PublicationDoc {
  /** `<event id>|<calendar id>`. */
  _id: string;
  workspace: string;
  event_id: string;
  calendar_id: string;
  href: string;
  etag: string | null;
  rev: number;
  /** An open proposal stops further writes until someone decides it. */
  proposal_id: string | null;
  written_at: Date;
}
const publicationSchema = new Schema<PublicationDoc>({
  _id: String, workspace: String, event_id: String, calendar_id: String, href: String, etag: { type: String, default: null }, rev: Number,
  proposal_id: { type: String, default: null }, written_at: Date,
}, { versionKey: false });
publicationSchema.index({ workspace: 1, event_id: 1 });

/** The calendar_publications collection. */
export function calendarPublications(db: Connection): Model<PublicationDoc> {
  return modelOn<PublicationDoc>(db, 'CalendarPublication', publicationSchema, 'calendar_publications');
}

/**
 * Both versions of an event whose copy on a calendar changed on the server since Cuadra wrote it:
 * nothing is overwritten until a person keeps one of them.
 */
export interface ProposalDoc {
  _id: string;
  workspace: string;
  event_id: string;
  calendar_id: string;
  href: string;
  /** What Cuadra would write, and what the server holds now (with its ETag; null text: deleted there). */
  ours_ics: string;
  theirs_ics: string | null;
  theirs_etag: string | null;
  status: 'open' | 'kept_cuadra' | 'kept_calendar';
  created_at: Date;
  decided_at: Date | null;
}
const proposalSchema = new Schema<ProposalDoc>({
  _id: String, workspace: String, event_id: String, calendar_id: String, href: String, ours_ics: String, theirs_ics: { type: String, default: null },
  theirs_etag: { type: String, default: null }, status: String, created_at: Date, decided_at: { type: Date, default: null },
}, { versionKey: false });
proposalSchema.index({ workspace: 1, event_id: 1 });

/** The calendar_proposals collection. */
export function calendarProposals(db: Connection): Model<ProposalDoc> {
  return modelOn<ProposalDoc>(db, 'CalendarProposal', proposalSchema, 'calendar_proposals');
}

/** JSON Schema of {@link accountView}. */
export const ACCOUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'url', 'username', 'status', 'last_error', 'last_synced_at', 'created_at'],
  properties: { id: TEXT, name: TEXT, url: TEXT, username: TEXT, status: { enum: [...ACCOUNT_STATUSES] }, last_error: NULLABLE_TEXT, last_synced_at: { anyOf: [{ type: 'null' }, DATE_TIME] }, created_at: DATE_TIME },
} as const;

/** The public shape of an account: never its password. */
export function accountView(a: CalendarAccountDoc) {
  return { id: a._id, name: a.name, url: a.url, username: a.username, status: a.status, last_error: a.last_error, last_synced_at: a.last_synced_at?.toISOString() ?? null, created_at: a.created_at.toISOString() };
}

/** JSON Schema of {@link calendarView}. */
export const CALENDAR_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'account_id', 'name', 'url', 'color', 'counts_for_availability', 'sync_collection', 'last_synced_at', 'last_sync_method', 'gone'],
  properties: {
    id: TEXT, account_id: TEXT, name: TEXT, url: TEXT, color: NULLABLE_TEXT, counts_for_availability: { type: 'boolean' }, sync_collection: { type: 'boolean' },
    last_synced_at: { anyOf: [{ type: 'null' }, DATE_TIME] }, last_sync_method: { enum: ['sync-collection', 'etag', null] }, gone: { type: 'boolean' },
  },
} as const;

/** The public shape of a connected calendar. */
export function calendarView(c: ConnectedCalendarDoc) {
  return {
    id: c._id, account_id: c.account_id, name: c.name, url: c.url, color: c.color, counts_for_availability: c.counts_for_availability, sync_collection: c.sync_collection,
    last_synced_at: c.last_synced_at?.toISOString() ?? null, last_sync_method: c.last_sync_method, gone: c.gone,
  };
}
