import { clampLimit, OrderedFeed, ORDERED_FEED_FIELDS, peerGraph, type BookingChangeRow, type OrderedFeedDoc, type PeerConfig, type PeerGraph, type SourceReader } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { bookingTypes, type BookingPrice, type BookingTypeDoc } from '../booking_types/model.ts';
import { bookings, type BookingDoc } from './model.ts';

/**
 * The bookings' change feed (issue 35; ARCHITECTURE.md, "Bookings reach CRM and finance"): every
 * state a booking takes (made, confirmed, moved, cancelled) as one entry `<booking>#<rev>`, in the
 * shared ordered feed (shared ordered-feed.ts), so a reader that has seen `seq` n has seen every
 * change up to n. crm (the booker's party and the booking's activity) and finance (the invoice of a
 * priced booking) each pull it with the read-only service assertion and keep their own mark;
 * projects never writes their collections.
 *
 * Crash safety: the booking's own write is the commit point and carries `feed_pending: true`; the
 * entry is written and given its place after it, then the flag is cleared. A crash in between
 * leaves the flag, and the bookings' background job ({@link publishStuckChanges}) records the
 * booking's state as it is then (a state skipped that way is harmless: readers apply a booking's
 * latest rev and ignore an older one). Writing the entry and publishing it are idempotent.
 *
 * A row (`booking_changes_since`): `{id, booking_id, rev, status, type_id, type_name, start, end,
 * host_time_zone, name, email, price: {amount, currency, tax_rate_ppm, invoice} | null, country,
 * changed_at, seq}`.
 */
export interface BookingChangeDoc extends OrderedFeedDoc {
  /** `<booking id>#<rev>`. */
  _id: string;
  booking_id: string;
  rev: number;
  status: BookingDoc['status'];
  type_id: string;
  type_name: string;
  start: Date;
  end: Date;
  /** The booking type's zone (the host's wall clock: the CRM activity's date and time). */
  host_time_zone: string;
  name: string;
  email: string;
  price: BookingPrice | null;
  /** The workspace's country as the call's principal stated it (finance's tax regime); null when it did not. */
  country: string | null;
  changed_at: Date;
}

const schema = new Schema<BookingChangeDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, booking_id: String, rev: Number, status: String, type_id: String, type_name: String,
  start: Date, end: Date, host_time_zone: String, name: String, email: String, price: { type: Schema.Types.Mixed, default: null }, country: { type: String, default: null },
  changed_at: Date, ...ORDERED_FEED_FIELDS,
}, { versionKey: false, minimize: false });
schema.index({ seq_key: 1 }, { unique: true, sparse: true });

/** The change entries (`booking_changes`). */
export function bookingChanges(db: Connection): Model<BookingChangeDoc> {
  return (db.models.BookingChange as Model<BookingChangeDoc> | undefined) ?? db.model<BookingChangeDoc>('BookingChange', schema, 'booking_changes');
}

/** The order crm and finance read the changes in (heads in `booking_changes_heads`). */
export const bookingChangeFeed = new OrderedFeed<BookingChangeDoc>(bookingChanges, 'booking_changes_heads', 'booking_changes_since');

/** The readers of the feed, asked after each change (the hint that makes them pull it now rather than at their next idle pass). */
const WAKE_QUERIES: readonly [string, string][] = [
  ['crm', 'query($id: ID!) { bookingActivity(bookingId: $id) { activityId } }'],
  ['invoices', 'query($id: ID!) { bookingInvoice(bookingId: $id) { id } }'],
];

/**
 * Records a booking's state in the feed once its own write is done (see the top of this file):
 * the entry under `<booking>#<rev>`, its place, then the booking's flag cleared (only if no later
 * write set it again). With a `graph`, crm and finance are told to pull (not awaited: a reader
 * that does not answer pulls on its next pass anyway).
 */
export async function recordChange(db: Connection, b: BookingDoc, now: Date, graph?: PeerGraph, hostZone?: string): Promise<void> {
  const zone = hostZone ?? (await bookingTypes(db).findOne({ _id: b.type_id, workspace: b.workspace }, { time_zone: 1 }).lean<Pick<BookingTypeDoc, 'time_zone'>>())?.time_zone ?? b.time_zone;
  const doc: BookingChangeDoc = {
    _id: `${b._id}#${b.rev}`, workspace: b.workspace, booking_id: b._id, rev: b.rev, status: b.status, type_id: b.type_id, type_name: b.type_name,
    start: b.start, end: b.end, host_time_zone: zone, name: b.name, email: b.email, price: b.price ? { ...b.price } : null, country: b.country ?? null, changed_at: now,
  };
  try {
    await bookingChanges(db).create(doc);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err; // a retry, or the repair, wrote it
  }
  await bookingChangeFeed.publish(db, b.workspace, doc._id);
  await bookings(db).updateOne({ _id: b._id, rev: b.rev, feed_pending: true }, { $set: { feed_pending: false } });
  if (graph) for (const [subgraph, query] of WAKE_QUERIES) void graph(subgraph, query, { id: b._id }).catch(() => undefined);
}

/**
 * The background repair: bookings a crash left with `feed_pending` past `olderThanMs` (no booking
 * call takes that long) have their current state recorded, and the readers told. Answers how many.
 */
export async function publishStuckChanges(db: Connection, now: Date, olderThanMs: number, peers?: PeerConfig): Promise<number> {
  const stuck = await bookings(db).find({ feed_pending: true, updated_at: { $lte: new Date(now.getTime() - olderThanMs) } }).limit(100).lean<BookingDoc[]>();
  for (const b of stuck) await recordChange(db, b, now, peers ? peerGraph('projects', peers, b.workspace) : undefined);
  return stuck.length;
}

/** A row of `booking_changes_since` (its contract: shared booking-changes.ts). */
function changeRow(d: BookingChangeDoc): BookingChangeRow {
  return {
    id: d._id, booking_id: d.booking_id, rev: d.rev, status: d.status, type_id: d.type_id, type_name: d.type_name, start: d.start.toISOString(), end: d.end.toISOString(),
    host_time_zone: d.host_time_zone, name: d.name, email: d.email,
    price: d.price ? { amount: d.price.amount, currency: d.price.currency, tax_rate_ppm: d.price.tax_rate_ppm ?? null, invoice: d.price.invoice ?? 'draft' } : null,
    country: d.country, changed_at: d.changed_at.toISOString(), seq: d.seq ?? null,
  };
}

/**
 * records.list `booking_changes_since` (a feed, service to service): the changes made after the
 * cursor in the order they were made final (`seq`, oldest first), then any a crash left without
 * their place (`seq` null). `next_cursor` is always answered once the feed has an entry; a page
 * holds at most `limit` sequenced changes, fewer means the reader is caught up.
 */
export const bookingChangesSinceSource: SourceReader = async (q, ctx) => {
  const page = await bookingChangeFeed.since(ctx.db, ctx.workspace, q.cursor, clampLimit(q.limit));
  return { rows: page.docs.map(changeRow), ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
};

