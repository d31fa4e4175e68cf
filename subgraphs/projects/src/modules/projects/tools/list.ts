import { defineListTool, searchTerm } from '@cuadra/shared';
import { PROJECT_VIEW_SCHEMA, projectMatches, projects, projectView } from '../model.ts';

/** Lists the workspace's project boards, newest first. */
export const list = defineListTool({
  name: 'projects.list',
  description: 'List project boards of the workspace, newest first, with their keys and columns; optional case-insensitive search of the name, key or description.',
  model: projects,
  view: projectView,
  viewSchema: PROJECT_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ search }) => {
    const text = searchTerm(search);
    return text ? (p) => projectMatches(p, text) : undefined;
  },
});
