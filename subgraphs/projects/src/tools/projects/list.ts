import { defineListTool, searchTerm } from '@cuadra/shared';
import { PROJECT_VIEW_SCHEMA, projects, projectView, type ProjectDoc } from '../../models/project.ts';

/** Lists the workspace's project boards, newest first. */
export const list = defineListTool<ProjectDoc, { search?: string; limit?: number; cursor?: string }>({
  name: 'projects.list',
  description: 'List project boards of the workspace, newest first, with their keys and columns; optional case-insensitive name search.',
  model: projects,
  view: projectView,
  viewSchema: PROJECT_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ search }) => {
    const text = searchTerm(search);
    return text ? (p) => p.name_lc.includes(text) : undefined;
  },
});
