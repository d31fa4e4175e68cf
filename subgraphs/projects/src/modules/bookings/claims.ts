import type { Connection } from 'mongoose';
import { GRAIN_MIN } from '../booking_types/fields.ts';
import { bookingClaims, bookings, type BookingDoc, type ClaimDoc } from './model.ts';

const GRAIN_MS = GRAIN_MIN * 60_000;

/** A claim whose booking never got written is taken to be a crash's leftover after this long. */
// CUADRA_BOOKING_ORPHAN_MS shortens it for the fault tests.
export const ORPHAN_CLAIM_MS = Number(process.env.CUADRA_BOOKING_ORPHAN_MS) || 60_000;

/** The claim ids of the cells a booking holds: [start − before, end + after) in {@link GRAIN_MIN}-minute cells, in order. */
export function cellsOf(workspace: string, start: Date, end: Date, beforeMin: number, afterMin: number): string[] {
  const out: string[] = [];
  const first = Math.floor((start.getTime() - beforeMin * 60_000) / GRAIN_MS) * GRAIN_MS;
  for (let t = first; t < end.getTime() + afterMin * 60_000; t += GRAIN_MS) out.push(`${workspace}|${new Date(t).toISOString()}`);
  return out;
}

/**
 * Claims `ids` for a booking, in order, stopping at the first one another booking holds (ordered
 * insert on unique `_id`s): of any number of bookings of one slot at once, the one that takes the
 * first cell is the only one that can take them all. A loser gives back what it took and answers
 * false — after releasing, once, the cells in its way that a crash left behind (see {@link isLeftover}).
 */
export async function claimCells(db: Connection, ids: readonly string[], bookingId: string, now: Date, repaired = false): Promise<boolean> {
  if (ids.length === 0) return true;
  try {
    await bookingClaims(db).insertMany(ids.map((_id) => ({ _id, booking_id: bookingId, at: now, until: claimUntil(_id) })), { ordered: true });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code !== 11000 && !String((err as Error).message).includes('E11000')) throw err;
    await releaseCells(db, ids, bookingId);
    if (repaired) return false;
    const held = await bookingClaims(db).find({ _id: { $in: [...ids] }, booking_id: { $ne: bookingId } }).lean<ClaimDoc[]>();
    const owners = await bookings(db).find({ _id: { $in: [...new Set(held.map((c) => c.booking_id))] } }, { status: 1, claims: 1, day_claim: 1 }).lean<Pick<BookingDoc, '_id' | 'status' | 'claims' | 'day_claim'>[]>();
    const ownerOf = new Map(owners.map((b) => [b._id, b]));
    let freed = false;
    for (const c of held) {
      if (!isLeftover(c, ownerOf.get(c.booking_id), now)) continue;
      // Conditional on the same holder and claim time: a cell re-taken meanwhile is not touched.
      freed = (await bookingClaims(db).deleteOne({ _id: c._id, booking_id: c.booking_id, at: c.at })).deletedCount === 1 || freed;
    }
    return freed ? claimCells(db, ids, bookingId, now, true) : false;
  }
}

/**
 * Whether a held claim is a crash's leftover, not a booking's hold: its booking is cancelled (a
 * cancellation writes the booking first, then gives its claims back), or — once the claim is older
 * than {@link ORPHAN_CLAIM_MS}, so no booking or reschedule still under way can own it — its booking
 * was never written, or does not list it (a reschedule that claimed a new time and stopped before
 * moving there, or moved and stopped before giving the old time back).
 */
export function isLeftover(claim: ClaimDoc, owner: Pick<BookingDoc, 'status' | 'claims' | 'day_claim'> | undefined, now: Date): boolean {
  if (owner?.status === 'cancelled') return true;
  if (now.getTime() - claim.at.getTime() < ORPHAN_CLAIM_MS) return false;
  return !owner || !(owner.claims.includes(claim._id) || owner.day_claim === claim._id);
}

/** Gives back the cells of `ids` this booking holds (never another's). */
export async function releaseCells(db: Connection, ids: readonly string[], bookingId: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 200) await bookingClaims(db).deleteMany({ _id: { $in: ids.slice(i, i + 200) }, booking_id: bookingId });
}

/**
 * Takes one of a type's `limit` places of a day (`<workspace>|<type>|<date>|<n>`), the first free;
 * null when all are taken. Unique `_id`s again: never more than `limit` bookings of a day.
 */
export async function claimDay(db: Connection, workspace: string, typeId: string, date: string, limit: number, bookingId: string, now: Date): Promise<string | null> {
  for (let n = 1; n <= limit; n++) {
    const id = `${workspace}|${typeId}|${date}|${n}`;
    if (await claimCells(db, [id], bookingId, now)) return id;
  }
  return null;
}

/**
 * When a claim stops mattering: the end of its cell (`<ws>|<ISO>`), or two days after the date of a
 * day claim (`<ws>|<type>|<date>|<n>`: past that day's end in any zone). A time that has passed can
 * never be booked again, so its claim guards nothing.
 */
export function claimUntil(id: string): Date {
  const parts = id.split('|');
  if (parts.length === 4) return new Date(Date.parse(`${parts[2]}T00:00:00Z`) + 2 * 86_400_000);
  return new Date(Date.parse(parts[1]) + GRAIN_MS);
}

/** Claims removed or dated per sweep at most (the next pass takes the rest). */
const SWEEP_BATCH = 1_000;

/**
 * The maintenance sweep's cleanup of `booking_claims` (never done by a read): claims whose time has
 * passed are deleted — by the `until` index, so the pass reads only what it removes — and claims
 * written before `until` existed get it from their id first. The booking keeps the ids it held.
 * @returns how many claims it removed or dated
 */
export async function removeExpiredClaims(db: Connection, now: Date): Promise<number> {
  let done = 0;
  const undated = await bookingClaims(db).find({ until: null }, { _id: 1 }).limit(SWEEP_BATCH).lean<{ _id: string }[]>();
  for (const c of undated) {
    const until = claimUntil(c._id);
    if (Number.isNaN(until.getTime())) continue;
    await bookingClaims(db).updateOne({ _id: c._id, until: null }, { $set: { until } });
    done++;
  }
  const expired = await bookingClaims(db).find({ until: { $lt: now } }, { _id: 1 }).limit(SWEEP_BATCH).lean<{ _id: string }[]>();
  if (expired.length) done += (await bookingClaims(db).deleteMany({ _id: { $in: expired.map((c) => c._id) }, until: { $lt: now } })).deletedCount;
  return done;
}
