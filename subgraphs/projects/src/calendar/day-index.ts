import { calendarDays, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { dateIn, WORKSPACE_ZONE } from './time.ts';

/**
 * Where a window's records are found without scanning (mongo-java-server answers only `_id` and
 * unique indexes by lookup; ARCHITECTURE "Bounded lists"): one document per workspace and day,
 * `_id` `<workspace>|<date>` in the workspace's calendar, holding the ids of what touches that day;
 * and one per workspace holding its repeating series, which are expanded on read. An id is added
 * before its record is written and pulled after it moved away, so a crash can only leave an extra
 * id, which readers drop when the record says otherwise.
 */
interface DayDoc { _id: string; ids: string[] }

const daySchema = new Schema<DayDoc>({ _id: { type: String, required: true }, ids: { type: [String], default: [] } }, { versionKey: false });

/** A day index: a collection of `<workspace>|<date>` documents. */
export type DayIndex = (db: Connection) => Model<DayDoc>;

/** The day index stored in `collection`. */
export function dayIndex(name: string, collection: string): DayIndex {
  return (db) => modelOn<DayDoc>(db, name, daySchema, collection);
}

/** The workspace's days (YYYY-MM-DD) an instant range touches, at most `max`. */
export function daysTouched(start: Date, end: Date, max = 62): string[] {
  const last = new Date(Math.max(start.getTime(), end.getTime() - 1));
  return calendarDays(dateIn(start, WORKSPACE_ZONE), dateIn(last, WORKSPACE_ZONE)).slice(0, max);
}

/** Adds `id` to each day's document. */
export async function addToDays(db: Connection, index: DayIndex, workspace: string, days: readonly string[], id: string): Promise<void> {
  if (days.length === 0) return;
  await index(db).bulkWrite(days.map((d) => ({ updateOne: { filter: { _id: `${workspace}|${d}` }, update: { $addToSet: { ids: id } }, upsert: true } })));
}

/** Pulls `id` from each day's document. */
export async function pullFromDays(db: Connection, index: DayIndex, workspace: string, days: readonly string[], id: string): Promise<void> {
  if (days.length === 0) return;
  await index(db).bulkWrite(days.map((d) => ({ updateOne: { filter: { _id: `${workspace}|${d}` }, update: { $pull: { ids: id } } } })));
}

/** The ids filed under the days from `from` to `to` (inclusive, YYYY-MM-DD), each once. */
export async function idsOfDays(db: Connection, index: DayIndex, workspace: string, from: string, to: string): Promise<string[]> {
  const keys = calendarDays(from, to).map((d) => `${workspace}|${d}`);
  const ids = new Set<string>();
  for (let i = 0; i < keys.length; i += 200) {
    for (const doc of await index(db).find({ _id: { $in: keys.slice(i, i + 200) } }).lean()) for (const id of doc.ids) ids.add(id);
  }
  return [...ids];
}

/** Reads documents by id, 200 at a time, sealed to the workspace. */
export async function byIds<T>(model: Model<any>, workspace: string, ids: readonly string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += 200) out.push(...((await model.find({ _id: { $in: ids.slice(i, i + 200) }, workspace }).lean()) as T[]));
  return out;
}
