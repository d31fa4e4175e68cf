import { CURSOR_SCHEMA, defineTool, listNewestFirst } from '@cuadra/shared';
import { projects, projectView, type ProjectDoc } from '../../models/project.ts';

interface Input { search?: string; limit?: number; cursor?: string }

/** Lists the workspace's projects, newest first. */
export const list = defineTool<Input>({
  name: 'projects.list',
  description: 'List project boards of the workspace, newest first, with their keys and columns; optional case-insensitive name search.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  async handler(input, ctx) {
    const text = input.search?.toLowerCase();
    const match = text ? (p: ProjectDoc) => p.name_lc.includes(text) : undefined;
    return listNewestFirst<ProjectDoc, ReturnType<typeof projectView>>(projects(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, projectView);
  },
});
