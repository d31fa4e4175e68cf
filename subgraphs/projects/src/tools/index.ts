import { create as createProject } from './projects/create.ts';
import { list as listProjects } from './projects/list.ts';
import { create as createTask } from './tasks/create.ts';
import { list as listTasks } from './tasks/list.ts';

/** Every tool the projects subgraph owns. */
export const tools = [createProject, listProjects, createTask, listTasks];

/** Tool modules the projects (work, calendar) subgraph owns (DOMAIN.md). */
export const modules = ['projects', 'tasks', 'calendar', 'agenda'] as const;
