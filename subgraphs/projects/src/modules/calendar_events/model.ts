import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { OccurrenceOverride, SeriesShape } from '../../calendar/recurrence.ts';

/** Kinds of calendar events (specification §2.5, §2.6). */
export const EVENT_KINDS = ['legal', 'tax', 'compliance', 'deadline', 'meeting', 'reminder', 'event'] as const;
/** Statuses of calendar events (specification §2.5). */
export const EVENT_STATUSES = ['confirmed', 'tentative', 'done', 'cancelled'] as const;
/** Kinds that are obligations: past their date and not done or cancelled, they show as overdue in the agenda. */
export const OBLIGATION_KINDS: readonly string[] = ['legal', 'tax', 'compliance', 'deadline'];

/** Someone asked to an event: a member or a party of the workspace, or an e-mail address. */
export interface Attendee {
  email: string;
  name: string | null;
  /** A crm party's id (checked through crm's graph when the event is written). */
  party_id: string | null;
}

/** A calendar event as stored: UTC instants plus the zone and wall-clock times they were written in. */
export interface CalendarEventDoc extends SeriesShape {
  _id: string;
  workspace: string;
  title: string;
  title_lc: string;
  description: string | null;
  location: string | null;
  kind: (typeof EVENT_KINDS)[number];
  status: (typeof EVENT_STATUSES)[number];
  /** The first occurrence's instants (for all-day events: when its first day begins and its last ends, in its zone). */
  start: Date;
  end: Date;
  /** When the last occurrence ends; null for a series without end. */
  until: Date | null;
  attendees: Attendee[];
  /** Minutes before each occurrence at which the attendees are e-mailed. */
  reminders: number[];
  /** When its next reminder is due (the reminder sweep reads by it); null: none will be. */
  next_reminder_at?: Date | null;
  /** Reminders due up to this instant were handled. */
  reminder_cursor?: Date | null;
  /** Where the event came from: written here, or made by a booking. */
  source: 'cuadra' | 'booking';
  booking_id: string | null;
  /** Raised by every change: guards conditional writes and the CalDAV copy's ETag. */
  rev: number;
  created_at: Date;
  updated_at: Date;
}

const overrideSchema = new Schema<OccurrenceOverride>(
  { recurrence_id: String, start_local: String, end_local: String, title: { type: String, default: null }, status: { type: String, default: null } },
  { _id: false },
);

const eventSchema = new Schema<CalendarEventDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    title: { type: String, required: true },
    title_lc: { type: String, required: true },
    description: { type: String, default: null },
    location: { type: String, default: null },
    kind: { type: String, required: true },
    status: { type: String, required: true },
    all_day: { type: Boolean, required: true },
    time_zone: { type: String, required: true },
    start_local: { type: String, required: true },
    end_local: { type: String, required: true },
    start: { type: Date, required: true },
    end: { type: Date, required: true },
    until: { type: Date, default: null },
    rrule: { type: String, default: null },
    exdates: { type: [String], default: [] },
    overrides: { type: [overrideSchema], default: [] },
    attendees: { type: [{ _id: false, email: String, name: { type: String, default: null }, party_id: { type: String, default: null } }], default: [] },
    reminders: { type: [Number], default: [] },
    next_reminder_at: { type: Date, default: null },
    reminder_cursor: { type: Date, default: null },
    source: { type: String, required: true },
    booking_id: { type: String, default: null },
    rev: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
eventSchema.index({ next_reminder_at: 1 });
addPositions(eventSchema);

/** The calendar events collection (records source `calendar_events`). */
export function calendarEvents(db: Connection): Model<CalendarEventDoc> {
  return modelOn<CalendarEventDoc>(db, 'CalendarEvent', eventSchema, 'calendar_events');
}

const ATTENDEE = {
  type: 'object', additionalProperties: false, required: ['email', 'name', 'party_id'],
  properties: { email: TEXT, name: NULLABLE_TEXT, party_id: NULLABLE_TEXT },
} as const;

const OVERRIDE = {
  type: 'object', additionalProperties: false, required: ['recurrence_id', 'start_local', 'end_local', 'title', 'status'],
  properties: { recurrence_id: TEXT, start_local: TEXT, end_local: TEXT, title: NULLABLE_TEXT, status: NULLABLE_TEXT },
} as const;

/** JSON Schema of {@link eventView}. */
export const EVENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'title', 'description', 'location', 'kind', 'status', 'all_day', 'time_zone', 'start_local', 'end_local', 'start', 'end', 'rrule', 'exdates', 'overrides', 'attendees', 'reminders', 'source', 'booking_id', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, title: TEXT, description: NULLABLE_TEXT, location: NULLABLE_TEXT,
    kind: { enum: [...EVENT_KINDS] }, status: { enum: [...EVENT_STATUSES] },
    all_day: { type: 'boolean' }, time_zone: TEXT, start_local: TEXT, end_local: TEXT, start: DATE_TIME, end: DATE_TIME,
    rrule: NULLABLE_TEXT, exdates: { type: 'array', items: TEXT }, overrides: { type: 'array', items: OVERRIDE },
    attendees: { type: 'array', items: ATTENDEE }, reminders: { type: 'array', items: { type: 'integer' } },
    source: { enum: ['cuadra', 'booking'] }, booking_id: NULLABLE_TEXT, created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** The public shape of a calendar event. */
export function eventView(e: CalendarEventDoc) {
  return {
    id: e._id, title: e.title, description: e.description, location: e.location, kind: e.kind, status: e.status,
    all_day: e.all_day, time_zone: e.time_zone, start_local: e.start_local, end_local: e.end_local,
    start: e.start.toISOString(), end: e.end.toISOString(), rrule: e.rrule, exdates: [...e.exdates],
    overrides: e.overrides.map((o) => ({ recurrence_id: o.recurrence_id, start_local: o.start_local, end_local: o.end_local, title: o.title ?? null, status: o.status ?? null })),
    attendees: e.attendees.map((a) => ({ email: a.email, name: a.name ?? null, party_id: a.party_id ?? null })),
    reminders: [...e.reminders], source: e.source, booking_id: e.booking_id ?? null,
    created_at: e.created_at.toISOString(), updated_at: e.updated_at.toISOString(),
  };
}

/** Whether an event matches a lower-cased search term: title, description, location or an attendee. */
export function eventMatches(e: CalendarEventDoc, needle: string): boolean {
  return e.title_lc.includes(needle) || containsText(e.description, needle) || containsText(e.location, needle) || e.attendees.some((a) => containsText(a.email, needle) || containsText(a.name, needle));
}
