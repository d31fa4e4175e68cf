import { CURSOR_SCHEMA, defineTool, listNewestFirst } from '@cuadra/shared';
import { agents, agentView, type AgentDoc } from '../../models/agent.ts';

interface Input { status?: AgentDoc['status']; search?: string; limit?: number; cursor?: string }


/** Lists the workspace's agents, newest first. */
export const list = defineTool<Input>({
  name: 'agents.list',
  description: 'List AI agents of the workspace, newest first; filter by status (active, paused) or a case-insensitive name search.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { enum: ['active', 'paused'] },
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  async handler(input, ctx) {
    const text = input.search?.toLowerCase();
    const match = input.status || text ? (a: AgentDoc) => (!input.status || a.status === input.status) && (!text || a.name_lc.includes(text)) : undefined;
    return listNewestFirst<AgentDoc, ReturnType<typeof agentView>>(agents(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, agentView);
  },
});
