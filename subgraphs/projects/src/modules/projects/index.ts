import { defineModule } from '@cuadra/shared';
import { projects } from './model.ts';
import { projectColumnsSource, projectsSource } from './sources.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';

/** Projects and their board columns. */
export const projectsModule = defineModule({
  name: 'projects',
  tools: [create, list],
  models: [projects],
  listed: [{ model: projects }],
  reads: { sources: { projects: projectsSource, project_columns: projectColumnsSource } },
  readGuards: { 'Query.project': 'projects', 'Query.projects': 'projects', Project: 'projects' },
});
