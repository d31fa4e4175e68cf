import { defineModule } from '@cuadra/shared';
import { tasks } from '../models/task.ts';
import { create } from '../tools/tasks/create.ts';
import { list } from '../tools/tasks/list.ts';

/** Tasks of projects. */
export const tasksModule = defineModule({
  name: 'tasks',
  tools: [create, list],
  models: [tasks],
  listed: [{ model: tasks }],
  reads: { sources: { project_tasks: { field: 'projectsRecords', module: 'tasks' } } },
  readGuards: { 'Query.tasks': 'tasks', Task: 'tasks' },
});
