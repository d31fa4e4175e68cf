import { defineTool, escapeRegex } from '@cuadra/shared';
import { projects, projectView } from '../../models/project.ts';

interface Input { search?: string; limit?: number; offset?: number }

/** Lists the workspace's projects, newest first. */
export const list = defineTool<Input>({
  name: 'projects.list',
  description: 'List project boards of the workspace, newest first, with their keys and columns; optional case-insensitive name search.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.search) filter.name_lc = { $regex: escapeRegex(input.search.toLowerCase()) };
    const limit = input.limit ?? 20;
    const model = projects(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(limit).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(projectView), total };
  },
});
