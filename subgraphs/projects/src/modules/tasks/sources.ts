import { CuadraError, listNewestFirst, type SourceReader } from '@cuadra/shared';
import { projectByKey } from '../projects/model.ts';
import { taskMatcher, tasks, type TaskDoc } from './model.ts';

function taskRow(t: TaskDoc) {
  return {
    id: t._id, ref: t.ref, project_id: t.project_id, project_key: t.ref.slice(0, t.ref.lastIndexOf('-')), title: t.title, column: t.column,
    priority: t.priority, due_date: t.due_date, assignee_email: t.assignee_email, order_key: t.order_key ?? '',
    checklist_done: (t.checklist ?? []).filter((c) => c.done).length, checklist_total: (t.checklist ?? []).length, created_at: t.created_at.toISOString(),
  };
}

/**
 * records.list `project_tasks`: newest first, by cursor (CONTRACT §9; `total` only without
 * filters); `ref` a project key (default all projects; `not_found` for a key the workspace does
 * not have); `status` a column name (exact); `search` the title, reference (WEB-12), description
 * or assignee e-mail — the test tasks.list filters with. No kind.
 */
export const projectTasksSource: SourceReader = async (q, { db, workspace }) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source project_tasks takes no kind.', { field: '/kind' });
  const projectId = q.ref !== undefined ? (await projectByKey(db, workspace, q.ref))._id : undefined;
  const match = taskMatcher({ projectId, column: q.status, search: q.search?.toLowerCase() });
  return listNewestFirst<TaskDoc, Record<string, unknown>>(tasks(db), { workspace, cursor: q.cursor, limit: Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100), match }, taskRow);
};
