import { defineModule } from '@cuadra/shared';
import { projects } from './model.ts';
import { projectColumnsSource, projectsSource } from './sources.ts';
import { addColumn } from './tools/add_column.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';
import { moveColumn } from './tools/move_column.ts';

/** Projects and their board columns. */
export const projectsModule = defineModule({
  name: 'projects',
  tools: [create, list, addColumn, moveColumn],
  models: [projects],
  listed: [{ model: projects }],
  reads: { sources: { projects: projectsSource, project_columns: projectColumnsSource } },
  readGuards: { 'Query.project': 'projects', 'Query.projects': 'projects', Project: 'projects' },
});
