import { CuadraError } from '@cuadra/shared';
import { generateKeyBetween } from 'fractional-indexing';
import type { Connection } from 'mongoose';
import { boardColumns, projects, type ProjectDoc } from './model.ts';

/** Most columns a board has (projects.create's bound). */
export const MAX_COLUMNS = 20;

/** The key between the column named `after` (null: before the first) and the one following it. */
export function keyAfter(p: ProjectDoc, after: string | null, moving?: string): string {
  const cols = boardColumns(p).filter((c) => c.name !== moving);
  const i = after === null ? -1 : cols.findIndex((c) => c.name === after);
  if (after !== null && i < 0) throw new CuadraError('invalid_input', `The column "${after}" is not on this project; its columns are ${p.columns.map((c) => `"${c}"`).join(', ')}.`, { field: '/after' });
  return generateKeyBetween(i < 0 ? null : cols[i].key, cols[i + 1]?.key ?? null);
}

/**
 * Writes a board's columns (names and keys, sorted by key) by one conditional update on the columns
 * read, so two changes at once cannot lose one: the loser reads again (three times, then `conflict`).
 */
export async function changeColumns(db: Connection, workspace: string, id: string, now: Date, change: (p: ProjectDoc) => { name: string; key: string }[]): Promise<ProjectDoc> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const p = await projects(db).findOne({ _id: id, workspace }).lean<ProjectDoc>();
    if (!p) throw new CuadraError('not_found', `No project ${id} exists in this workspace.`);
    const cols = change(p).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const set = { columns: cols.map((c) => c.name), column_keys: cols.map((c) => c.key), updated_at: now };
    const written = await projects(db).updateOne({ _id: id, workspace, columns: p.columns }, { $set: set });
    if (written.matchedCount === 1) return { ...p, ...set };
  }
  throw new CuadraError('conflict', `The columns of project ${id} are being changed by someone else; read them again and retry.`);
}
