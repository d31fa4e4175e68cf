import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { addToDays, pullFromDays } from '../../calendar/day-index.ts';
import { taskDueDays } from './board.ts';
import { tasks, type TaskDoc } from './model.ts';

/**
 * Changes one task by a conditional write on what was read (its `rev`, or for tasks written before
 * revs its column and order key): a change made meanwhile is read again and recomputed, three times at
 * most, then `conflict`. The due-date index gains the new date before the write and loses the old one
 * after it.
 */
export async function changeTask(db: Connection, workspace: string, id: string, now: Date, change: (t: TaskDoc) => Promise<Partial<TaskDoc>> | Partial<TaskDoc>): Promise<TaskDoc> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = await tasks(db).findOne({ _id: id, workspace }).lean<TaskDoc>();
    if (!before) throw new CuadraError('not_found', `No task ${id} exists in this workspace.`);
    const set = { ...(await change(before)), rev: (before.rev ?? 0) + 1, updated_at: now };
    const after = { ...before, ...set };
    if (after.due_date && after.due_date !== before.due_date) await addToDays(db, taskDueDays, workspace, [after.due_date], id);
    const guard = before.rev === undefined ? { rev: { $exists: false }, column: before.column, order_key: before.order_key ?? { $exists: false } } : { rev: before.rev };
    const written = await tasks(db).updateOne({ _id: id, workspace, ...guard }, { $set: set });
    if (written.matchedCount === 1) {
      if (before.due_date && before.due_date !== after.due_date) await pullFromDays(db, taskDueDays, workspace, [before.due_date], id);
      return after;
    }
  }
  throw new CuadraError('conflict', `The task ${id} is being changed by someone else; read it again and retry.`);
}
