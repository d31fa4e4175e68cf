import { defineModule } from '@cuadra/shared';
import { projects } from '../models/project.ts';
import { create } from '../tools/projects/create.ts';
import { list } from '../tools/projects/list.ts';

/** Projects and their board columns. */
export const projectsModule = defineModule({
  name: 'projects',
  tools: [create, list],
  models: [projects],
  listed: [{ model: projects }],
  reads: { sources: { projects: { field: 'projectsRecords', module: 'projects' }, project_columns: { field: 'projectsRecords', module: 'projects' } } },
  readGuards: { 'Query.project': 'projects', 'Query.projects': 'projects', Project: 'projects' },
});
