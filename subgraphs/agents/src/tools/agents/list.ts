import { defineTool, escapeRegex } from '@cuadra/shared';
import { agents, agentView, type AgentDoc } from '../../models/agent.ts';

interface Input { status?: AgentDoc['status']; search?: string; limit?: number; offset?: number }


/** Lists the workspace's agents, newest first. */
export const list = defineTool<Input>({
  name: 'agents.list',
  description: 'List AI agents of the workspace, newest first; filter by status (active, paused) or a case-insensitive name search.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { enum: ['active', 'paused'] },
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.status) filter.status = input.status;
    if (input.search) filter.name_lc = { $regex: escapeRegex(input.search.toLowerCase()) };
    const limit = input.limit ?? 20;
    const model = agents(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(limit).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(agentView), total };
  },
});
