import { defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changeTask } from '../change.ts';
import { PRIORITIES, TASK_VIEW_SCHEMA, taskView } from '../model.ts';

/** Changes a task's details (not its place: tasks.move). */
export const update = defineTool({
  name: 'tasks.update',
  description:
    'Change a task: title, description, due date (YYYY-MM-DD, null to clear), assignee e-mail (null to clear), priority, and its checklist ' +
    '(the whole list of steps, each {text, done}). Its column and place change with tasks.move.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA,
      title: { type: 'string', minLength: 1, maxLength: 300 },
      description: { type: ['string', 'null'], maxLength: 10000 },
      due_date: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
      assignee_email: { anyOf: [{ type: 'string', format: 'email', maxLength: 254 }, { type: 'null' }] },
      priority: { enum: [...PRIORITIES] },
      checklist: {
        type: 'array', maxItems: 100,
        items: { type: 'object', additionalProperties: false, required: ['text', 'done'], properties: { text: { type: 'string', minLength: 1, maxLength: 500 }, done: { type: 'boolean' } } },
      },
    },
  },
  output: recordOutput('task', TASK_VIEW_SCHEMA),
  async handler(input, ctx) {
    const task = await changeTask(ctx.db, ctx.workspace, input.id, ctx.now, () => ({
      ...(input.title !== undefined ? { title: input.title.trim() } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.due_date !== undefined ? { due_date: input.due_date } : {}),
      ...(input.assignee_email !== undefined ? { assignee_email: input.assignee_email?.toLowerCase() ?? null } : {}),
      ...(input.priority !== undefined ? { priority: input.priority } : {}),
      ...(input.checklist !== undefined ? { checklist: input.checklist.map((c) => ({ text: c.text, done: c.done })) } : {}),
    }));
    return { task: taskView(task) };
  },
});
