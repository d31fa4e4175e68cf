import { CuadraError, defineTool } from '@cuadra/shared';
import { projects } from '../../models/project.ts';
import { tasks, taskView } from '../../models/task.ts';

interface Input { project_id?: string; column?: string; due_before?: string; limit?: number; offset?: number }

/** Lists the workspace's tasks, optionally of one project, one column or due before a date. */
export const list = defineTool<Input>({
  name: 'tasks.list',
  description:
    'List tasks of the workspace, newest first; filter by project, column, or tasks due strictly before a date (YYYY-MM-DD), ' +
    'which lists them soonest due first and leaves out tasks without a due date.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      project_id: { type: 'string', minLength: 1, maxLength: 64 },
      column: { type: 'string', minLength: 1, maxLength: 60 },
      due_before: { type: 'string', format: 'date' },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.project_id) {
      // A project the caller cannot see is named in the input: say so rather than answer an empty list.
      const exists = await projects(ctx.db).exists({ _id: input.project_id, workspace: ctx.workspace });
      if (!exists) throw new CuadraError('not_found', `No project ${input.project_id} exists in this workspace.`);
      filter.project_id = input.project_id;
    }
    if (input.column) filter.column = input.column;
    if (input.due_before) filter.due_date = { $lt: input.due_before };
    const sort: Record<string, 1 | -1> = input.due_before ? { due_date: 1, created_at: 1, _id: 1 } : { created_at: -1, _id: -1 };
    const limit = input.limit ?? 20;
    const model = tasks(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort(sort).skip(input.offset ?? 0).limit(limit).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(taskView), total };
  },
});
