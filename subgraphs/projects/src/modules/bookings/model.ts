import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { dayIndex } from '../../calendar/day-index.ts';
import type { BookingPrice } from '../booking_types/model.ts';

/** Booking statuses: waiting for confirmation, confirmed, cancelled. */
export const BOOKING_STATUSES = ['pending', 'confirmed', 'cancelled'] as const;

/** A booking as stored. */
export interface BookingDoc {
  _id: string;
  workspace: string;
  type_id: string;
  type_name: string;
  status: (typeof BOOKING_STATUSES)[number];
  start: Date;
  end: Date;
  /** The type's buffers when it was booked: what its claim covers beyond the meeting. */
  buffer_before_min: number;
  buffer_after_min: number;
  /** The zone the booker saw the slot in. */
  time_zone: string;
  name: string;
  email: string;
  answers: Record<string, string>;
  /** The calendar event the booking made. */
  event_id: string;
  /** Ids of the slot claims (`booking_claims`) this booking holds; emptied when it is cancelled. */
  claims: string[];
  /** The daily-limit claim it holds, if its type has a limit. */
  day_claim: string | null;
  price: BookingPrice | null;
  /** The workspace's country as the booking call's principal stated it (finance's tax regime for its invoice); absent when it did not. */
  country?: string | null;
  /** True from each write of the booking until its state is in the change feed (changes.ts; a crash in between is repaired). */
  feed_pending?: boolean;
  /** True from the booking's write until its calendar event is written (a crash in between is repaired). */
  event_pending?: boolean;
  /** Set once the .ics invitation was handed to the SMTP server. */
  invited_at: Date | null;
  rev: number;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<BookingDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, type_id: String, type_name: String, status: String,
  start: Date, end: Date, buffer_before_min: Number, buffer_after_min: Number, time_zone: String, name: String, email: String,
  answers: { type: Object, default: {} }, event_id: String, claims: { type: [String], default: [] }, day_claim: { type: String, default: null },
  price: { type: Schema.Types.Mixed, default: null }, invited_at: { type: Date, default: null }, event_pending: { type: Boolean, default: false },
  country: { type: String, default: null }, feed_pending: { type: Boolean, default: false },
  rev: Number, created_at: Date, updated_at: Date,
}, { versionKey: false, minimize: false });
schema.index({ event_pending: 1, created_at: 1 });
schema.index({ feed_pending: 1, updated_at: 1 });
addPositions(schema);

/** The bookings collection (records source `bookings`). */
export function bookings(db: Connection): Model<BookingDoc> {
  return modelOn<BookingDoc>(db, 'Booking', schema, 'bookings');
}

/** Bookings by the workspace's day of their start. */
export const bookingDays = dayIndex('BookingDay', 'booking_days');

/**
 * A claim on one {@link GRAIN_MIN}-minute cell of the workspace's calendar, `_id`
 * `<workspace>|<cell start ISO>`: the unique `_id` is what makes two bookings of overlapping time
 * impossible, however many arrive at once. `ws|type|date|n` ids claim the n-th booking of a type's day.
 */
export interface ClaimDoc {
  _id: string;
  booking_id: string;
  at: Date;
  /** When the claimed time has passed (the maintenance sweep removes the claim after it); absent on claims written before it existed. */
  until?: Date;
}
const claimSchema = new Schema<ClaimDoc>({ _id: String, booking_id: String, at: Date, until: Date }, { versionKey: false });
claimSchema.index({ until: 1 });

/** The slot claims collection. */
export function bookingClaims(db: Connection): Model<ClaimDoc> {
  return modelOn<ClaimDoc>(db, 'BookingClaim', claimSchema, 'booking_claims');
}

/** JSON Schema of {@link bookingView}. */
export const BOOKING_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'type_id', 'type_name', 'status', 'start', 'end', 'local_start', 'time_zone', 'name', 'email', 'answers', 'event_id', 'price', 'invited', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, type_id: TEXT, type_name: TEXT, status: { enum: [...BOOKING_STATUSES] }, start: DATE_TIME, end: DATE_TIME,
    local_start: TEXT, time_zone: TEXT, name: TEXT, email: TEXT, answers: { type: 'object', additionalProperties: { type: 'string' } },
    event_id: TEXT, price: { anyOf: [{ type: 'null' }, { type: 'object', required: ['amount', 'currency'], properties: { amount: { type: 'integer' }, currency: TEXT } }] },
    invited: { type: 'boolean' }, created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** The public shape of a booking; `local_start` is written in the booker's zone. */
export function bookingView(b: BookingDoc, localStart: string) {
  return {
    id: b._id, type_id: b.type_id, type_name: b.type_name, status: b.status, start: b.start.toISOString(), end: b.end.toISOString(),
    local_start: localStart, time_zone: b.time_zone, name: b.name, email: b.email, answers: { ...b.answers }, event_id: b.event_id,
    price: b.price ? { amount: b.price.amount, currency: b.price.currency } : null, invited: b.invited_at !== null,
    created_at: b.created_at.toISOString(), updated_at: b.updated_at.toISOString(),
  };
}

/** Whether a booking matches a lower-cased search term: the booker's name or e-mail, or the type. */
export function bookingMatches(b: BookingDoc, needle: string): boolean {
  return containsText(b.name, needle) || containsText(b.email, needle) || containsText(b.type_name, needle);
}

export { NULLABLE_TEXT };
