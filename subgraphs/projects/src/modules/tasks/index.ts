import { defineModule } from '@cuadra/shared';
import { tasks } from './model.ts';
import { projectTasksSource } from './sources.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';
import { move } from './tools/move.ts';
import { update } from './tools/update.ts';
import { tasksLane } from './agenda.ts';
import { taskDueDays } from './board.ts';

/** Tasks of projects. */
export const tasksModule = defineModule({
  name: 'tasks',
  tools: [create, list, update, move],
  models: [tasks, taskDueDays],
  listed: [{ model: tasks }],
  reads: { sources: { project_tasks: projectTasksSource }, agenda: { tasks: tasksLane } },
  readGuards: { 'Query.tasks': 'tasks', Task: 'tasks' },
});
