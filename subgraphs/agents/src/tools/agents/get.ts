import { CuadraError, defineTool } from '@cuadra/shared';
import { agents, agentView } from '../../models/agent.ts';

/** Reads one agent of the caller's workspace. */
export const get = defineTool<{ id: string }>({
  name: 'agents.get',
  description: 'Get one AI agent by id, with its model, instructions, tool patterns and status.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  },
  async handler(input, ctx) {
    const agent = await agents(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!agent) throw new CuadraError('not_found', `No agent ${input.id} exists in this workspace.`);
    return { agent: agentView(agent) };
  },
});
