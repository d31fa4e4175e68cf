import { declareDerivedCollection, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * Which documents of a source were created on a day, for "newest first" reads that never sort
 * a whole collection (the store here sorts in memory and scans for ranges). `_id` =
 * `<workspace>|<source>|<YYYY-MM-DD>`. An id is added before its document is written, so an id
 * without a document (a failed insert) can appear and is skipped by readers.
 */
export interface RecentDoc {
  _id: string;
  ids: string[];
}

const schema = new Schema<RecentDoc>({ _id: { type: String, required: true }, ids: { type: [String], default: [] } }, { versionKey: false });

// An index of ids (an id without its document is skipped by readers): not an action's effect.
declareDerivedCollection('recent_index');

/** The recent-documents index collection. */
export function recentIndex(db: Connection): Model<RecentDoc> {
  return modelOn<RecentDoc>(db, 'RecentIndex', schema, 'recent_index');
}

/** Id of one day's entry. */
export function recentId(workspace: string, source: string, day: string): string {
  return `${workspace}|${source}|${day}`;
}

/** Records that a document of `source` is created on `day` (UTC date of its `created_at`). */
export async function indexCreated(db: Connection, workspace: string, source: string, createdAt: Date, id: string): Promise<void> {
  await recentIndex(db).updateOne({ _id: recentId(workspace, source, createdAt.toISOString().slice(0, 10)) }, { $addToSet: { ids: id } }, { upsert: true });
}
