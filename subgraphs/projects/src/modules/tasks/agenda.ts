import { addDays, type AgendaEntry, type LaneReader } from '@cuadra/shared';
import { byIds, idsOfDays } from '../../calendar/day-index.ts';
import { projects, type ProjectDoc } from '../projects/model.ts';
import { taskDueDays } from './board.ts';
import { tasks, type TaskDoc } from './model.ts';

/**
 * The agenda's `tasks` lane (specification §2.6): tasks by due date from the due-date index (read by
 * `_id`, one document per day), those sitting in their board's last column (done) left out; with
 * `overdue`, the open tasks due in the 90 days before the window, marked overdue. Entries are
 * `deadline`s, so a kinds filter for deadlines keeps them.
 */
export const tasksLane: LaneReader = async (window, { db, workspace }) => {
  const from = window.overdue ? addDays(window.from, -90) : window.from;
  const ids = await idsOfDays(db, taskDueDays, workspace, from, window.to);
  const found = await byIds<TaskDoc>(tasks(db), workspace, ids);
  const boards = await byIds<ProjectDoc>(projects(db), workspace, [...new Set(found.map((t) => t.project_id))]);
  const lastColumn = new Map(boards.map((p) => [p._id, p.columns[p.columns.length - 1]]));
  const entries: AgendaEntry[] = [];
  for (const t of found) {
    // The index may hold a date the task no longer has (a crash between writes): the task decides.
    if (!t.due_date || t.due_date < from || t.due_date > window.to || !lastColumn.has(t.project_id)) continue;
    if (t.column === lastColumn.get(t.project_id)) continue;
    entries.push({
      date: t.due_date, kind: 'deadline', source: 'tasks', title: `${t.ref} ${t.title}`,
      task_id: t._id, ref: t.ref, project_id: t.project_id, column: t.column, assignee_email: t.assignee_email, priority: t.priority,
      overdue: t.due_date < window.from,
    });
  }
  return entries.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : String(a.ref).localeCompare(String(b.ref), 'en', { numeric: true }))).slice(0, window.limit);
};
