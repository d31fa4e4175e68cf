import { createPositioned, CuadraError, defineTool, ID_SCHEMA, newId, recordOutput } from '@cuadra/shared';
import { addToDays } from '../../../calendar/day-index.ts';
import { MAX_TASKS, type ProjectDoc } from '../../projects/model.ts';
import { boardOf, placeKey, taskDueDays } from '../board.ts';
import { projects } from '../../projects/model.ts';
import { PRIORITIES, TASK_VIEW_SCHEMA, tasks, taskView, type TaskDoc } from '../model.ts';

/** Adds a task to a project of the caller's workspace, numbered in that project's sequence. */
export const create = defineTool({
  name: 'tasks.create',
  description:
    'Add a task to a project: title, optional description, column (one of the project\'s columns; default its first), ' +
    'due date (YYYY-MM-DD), assignee e-mail, priority (low, normal, high, urgent; default normal) and a checklist of steps. It goes to the end of its column. Answers its reference, e.g. WEB-12.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['project_id', 'title'],
    properties: {
      project_id: ID_SCHEMA,
      title: { type: 'string', minLength: 1, maxLength: 300 },
      description: { type: 'string', maxLength: 10000 },
      column: { type: 'string', minLength: 1, maxLength: 60 },
      due_date: { type: 'string', format: 'date' },
      assignee_email: { type: 'string', format: 'email', maxLength: 254 },
      priority: { enum: [...PRIORITIES] },
      checklist: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 500 } },
    },
  },
  output: recordOutput('task', TASK_VIEW_SCHEMA),
  async handler(input, ctx) {
    const project = await projects(ctx.db).findOne({ _id: input.project_id, workspace: ctx.workspace }).lean<ProjectDoc>();
    if (!project) throw new CuadraError('not_found', `No project ${input.project_id} exists in this workspace.`);
    const column = input.column ?? project.columns[0];
    if (!project.columns.includes(column)) {
      throw new CuadraError('invalid_input', `The column "${column}" is not on this project; its columns are ${project.columns.map((c) => `"${c}"`).join(', ')}.`, {
        field: '/column',
      });
    }
    if ((project.task_ids?.length ?? 0) >= MAX_TASKS) throw new CuadraError('conflict', `A project holds at most ${MAX_TASKS} tasks; start another project.`);
    // At the end of its column; read before the number is taken, so a refusal leaves no gap.
    const orderKey = placeKey(await boardOf(ctx.db, project), column, {});
    const id = newId('tsk');
    // Numbers are taken only once the task is known to be valid, so refusals leave no gaps; the id joins
    // the board in the same write (a crash before the task is stored leaves an id readers drop).
    const counter = await projects(ctx.db)
      .findOneAndUpdate({ _id: project._id, workspace: ctx.workspace }, { $inc: { task_seq: 1 }, $push: { task_ids: id } }, { returnDocument: 'after', projection: { key: 1, task_seq: 1 } })
      .lean();
    if (!counter) throw new CuadraError('not_found', `No project ${input.project_id} exists in this workspace.`);
    if (input.due_date) await addToDays(ctx.db, taskDueDays, ctx.workspace, [input.due_date], id);
    const doc: TaskDoc = {
      _id: id,
      workspace: ctx.workspace,
      project_id: project._id,
      number: counter.task_seq,
      ref: `${counter.key}-${counter.task_seq}`,
      title: input.title.trim(),
      description: input.description ?? null,
      column,
      due_date: input.due_date ?? null,
      assignee_email: input.assignee_email ?? null,
      priority: input.priority ?? 'normal',
      order_key: orderKey,
      checklist: (input.checklist ?? []).map((text) => ({ text, done: false })),
      rev: 1,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    await createPositioned(tasks(ctx.db), doc);
    return { task: taskView(doc) };
  },
});
