import { defineModule } from '@cuadra/shared';
import { tasks } from './model.ts';
import { projectTasksSource } from './sources.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';

/** Tasks of projects. */
export const tasksModule = defineModule({
  name: 'tasks',
  tools: [create, list],
  models: [tasks],
  listed: [{ model: tasks }],
  reads: { sources: { project_tasks: projectTasksSource } },
  readGuards: { 'Query.tasks': 'tasks', Task: 'tasks' },
});
