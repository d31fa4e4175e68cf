import { CuadraError, defineListTool, ID_SCHEMA } from '@cuadra/shared';
import { projects } from '../../projects/model.ts';
import { TASK_VIEW_SCHEMA, taskMatcher, tasks, taskView } from '../model.ts';

/** Lists the workspace's tasks, optionally of one project, one column or due before a date. */
export const list = defineListTool({
  name: 'tasks.list',
  description: 'List tasks of the workspace, newest first; filter by project, column, or tasks due strictly before a date (YYYY-MM-DD), which leaves out tasks without a due date.',
  model: tasks,
  view: taskView,
  viewSchema: TASK_VIEW_SCHEMA,
  filters: {
    project_id: ID_SCHEMA,
    column: { type: 'string', minLength: 1, maxLength: 60 },
    due_before: { type: 'string', format: 'date' },
  },
  async before(input, ctx) {
    // A project the caller cannot see is named in the input: say so rather than answer an empty list.
    if (input.project_id && !(await projects(ctx.db).exists({ _id: input.project_id, workspace: ctx.workspace }))) {
      throw new CuadraError('not_found', `No project ${input.project_id} exists in this workspace.`);
    }
  },
  match: ({ project_id, column, due_before }) => taskMatcher({ projectId: project_id, column, dueBefore: due_before }),
});
