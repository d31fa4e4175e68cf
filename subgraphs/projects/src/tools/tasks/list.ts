import { CuadraError, defineListTool } from '@cuadra/shared';
import { projects } from '../../models/project.ts';
import { TASK_VIEW_SCHEMA, tasks, taskView, type TaskDoc } from '../../models/task.ts';

/** Lists the workspace's tasks, optionally of one project, one column or due before a date. */
export const list = defineListTool<TaskDoc, { project_id?: string; column?: string; due_before?: string; limit?: number; cursor?: string }>({
  name: 'tasks.list',
  description: 'List tasks of the workspace, newest first; filter by project, column, or tasks due strictly before a date (YYYY-MM-DD), which leaves out tasks without a due date.',
  model: tasks,
  view: taskView,
  viewSchema: TASK_VIEW_SCHEMA,
  filters: {
    project_id: { type: 'string', minLength: 1, maxLength: 64 },
    column: { type: 'string', minLength: 1, maxLength: 60 },
    due_before: { type: 'string', format: 'date' },
  },
  async before(input, ctx) {
    // A project the caller cannot see is named in the input: say so rather than answer an empty list.
    if (input.project_id && !(await projects(ctx.db).exists({ _id: input.project_id, workspace: ctx.workspace }))) {
      throw new CuadraError('not_found', `No project ${input.project_id} exists in this workspace.`);
    }
  },
  match: ({ project_id: projectId, column, due_before: dueBefore }) => (projectId || column || dueBefore
    ? (t) => (!projectId || t.project_id === projectId) && (!column || t.column === column) && (!dueBefore || (t.due_date !== null && t.due_date < dueBefore))
    : undefined),
});
