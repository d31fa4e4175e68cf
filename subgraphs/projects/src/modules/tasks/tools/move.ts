import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { boardOf, placeKey } from '../board.ts';
import { changeTask } from '../change.ts';
import { TASK_VIEW_SCHEMA, taskView } from '../model.ts';
import { projects, type ProjectDoc } from '../../projects/model.ts';

/** Moves a task to a column and a place in it: only the task's own column and order key change. */
export const move = defineTool({
  name: 'tasks.move',
  description:
    'Move a task on its board: to column (default its own), just after the task after_id (null: first) or just before before_id; ' +
    'neither: last. Only this task changes (a fractional order key between its new neighbours); a task in the last column counts as done.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA,
      column: { type: 'string', minLength: 1, maxLength: 60 },
      after_id: { anyOf: [ID_SCHEMA, { type: 'null' }] },
      before_id: ID_SCHEMA,
    },
  },
  output: recordOutput('task', TASK_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (input.after_id !== undefined && input.before_id !== undefined) throw new CuadraError('invalid_input', 'Give after_id or before_id, not both.', { field: '/before_id' });
    if (input.after_id === input.id || input.before_id === input.id) throw new CuadraError('invalid_input', 'A task cannot be placed next to itself.', { field: input.before_id ? '/before_id' : '/after_id' });
    const task = await changeTask(ctx.db, ctx.workspace, input.id, ctx.now, async (t) => {
      const project = await projects(ctx.db).findOne({ _id: t.project_id, workspace: ctx.workspace }).lean<ProjectDoc>();
      if (!project) throw new CuadraError('not_found', `No project ${t.project_id} exists in this workspace.`);
      const column = input.column ?? t.column;
      if (!project.columns.includes(column)) {
        throw new CuadraError('invalid_input', `The column "${column}" is not on this project; its columns are ${project.columns.map((c) => `"${c}"`).join(', ')}.`, { field: '/column' });
      }
      const key = placeKey(await boardOf(ctx.db, project), column, { after: input.after_id, before: input.before_id }, t._id);
      return { column, order_key: key };
    });
    return { task: taskView(task) };
  },
});
