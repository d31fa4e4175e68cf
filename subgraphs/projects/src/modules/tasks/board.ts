import { CuadraError } from '@cuadra/shared';
import { generateKeyBetween } from 'fractional-indexing';
import type { Connection } from 'mongoose';
import { byIds, dayIndex } from '../../calendar/day-index.ts';
import { boardColumns, projects, type BoardColumn, type ProjectDoc } from '../projects/model.ts';
import { tasks, type TaskDoc } from './model.ts';

/** Open tasks by due date: `<workspace>|<date>` → task ids (the agenda's `tasks` lane reads it). */
export const taskDueDays = dayIndex('TaskDueDay', 'task_due_days');

/** Tasks in board order: by order key (older tasks without one first, by number), ties by number. */
export function byBoardOrder(a: TaskDoc, b: TaskDoc): number {
  const ka = a.order_key ?? '';
  const kb = b.order_key ?? '';
  return ka < kb ? -1 : ka > kb ? 1 : a.number - b.number;
}

/** A project's board: its columns in order, each with its tasks in order. */
export interface Board { project: ProjectDoc; columns: (BoardColumn & { tasks: TaskDoc[] })[] }

/** Reads a board by `_id` (the project's task ids), never by scanning the tasks. */
export async function readBoard(db: Connection, workspace: string, projectId: string): Promise<Board> {
  const project = await projects(db).findOne({ _id: projectId, workspace }).lean<ProjectDoc>();
  if (!project) throw new CuadraError('not_found', `No project ${projectId} exists in this workspace.`);
  return boardOf(db, project);
}

/** The board of a project already read. */
export async function boardOf(db: Connection, project: ProjectDoc): Promise<Board> {
  const list = await byIds<TaskDoc>(tasks(db), project.workspace, project.task_ids ?? []);
  const columns = boardColumns(project).map((c) => ({ ...c, tasks: list.filter((t) => t.column === c.name && t.project_id === project._id).sort(byBoardOrder) }));
  return { project, columns };
}

/**
 * The order key of a task placed in `column` just after `afterId` (null: first; undefined: last),
 * among the column's tasks less the one moving. Tasks sharing a key (two moves to one place at once)
 * count as one place, so the key is always strictly between two different keys.
 */
export function placeKey(board: Board, column: string, place: { after?: string | null; before?: string }, moving?: string): string {
  const col = board.columns.find((c) => c.name === column)!;
  const list = col.tasks.filter((t) => t._id !== moving);
  const key = (t: TaskDoc | undefined) => (t ? t.order_key ?? null : null);
  if (place.before !== undefined) {
    const i = list.findIndex((t) => t._id === place.before);
    if (i < 0) throw new CuadraError('invalid_input', `The task ${place.before} is not in the column "${column}" of this project.`, { field: '/before_id' });
    const upper = key(list[i]);
    const lower = [...list.slice(0, i)].reverse().find((t) => (t.order_key ?? '') < (upper ?? ''));
    return generateKeyBetween(key(lower), upper || null);
  }
  if (place.after === undefined) return generateKeyBetween(key(list[list.length - 1]) || null, null);
  if (place.after === null) return generateKeyBetween(null, key(list[0]) || null);
  const i = list.findIndex((t) => t._id === place.after);
  if (i < 0) throw new CuadraError('invalid_input', `The task ${place.after} is not in the column "${column}" of this project.`, { field: '/after_id' });
  const lower = key(list[i]);
  const upper = list.slice(i + 1).find((t) => (t.order_key ?? '') > (lower ?? ''));
  return generateKeyBetween(lower || null, key(upper) || null);
}
