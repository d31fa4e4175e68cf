import { CuadraError, CURSOR_SCHEMA, defineTool, listNewestFirst } from '@cuadra/shared';
import { projects } from '../../models/project.ts';
import { tasks, taskView, type TaskDoc } from '../../models/task.ts';

interface Input { project_id?: string; column?: string; due_before?: string; limit?: number; cursor?: string }

/** Lists the workspace's tasks, optionally of one project, one column or due before a date. */
export const list = defineTool<Input>({
  name: 'tasks.list',
  description:
    'List tasks of the workspace, newest first; filter by project, column, or tasks due strictly before a date (YYYY-MM-DD), ' +
    'which leaves out tasks without a due date.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      project_id: { type: 'string', minLength: 1, maxLength: 64 },
      column: { type: 'string', minLength: 1, maxLength: 60 },
      due_before: { type: 'string', format: 'date' },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  async handler(input, ctx) {
    if (input.project_id) {
      // A project the caller cannot see is named in the input: say so rather than answer an empty list.
      const exists = await projects(ctx.db).exists({ _id: input.project_id, workspace: ctx.workspace });
      if (!exists) throw new CuadraError('not_found', `No project ${input.project_id} exists in this workspace.`);
    }
    const { project_id: projectId, column, due_before: dueBefore } = input;
    const match = projectId || column || dueBefore
      ? (t: TaskDoc) => (!projectId || t.project_id === projectId) && (!column || t.column === column) && (!dueBefore || (t.due_date !== null && t.due_date < dueBefore))
      : undefined;
    return listNewestFirst<TaskDoc, ReturnType<typeof taskView>>(tasks(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, taskView);
  },
});
