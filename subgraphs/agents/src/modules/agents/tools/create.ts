import { createPositioned, CuadraError, TOOL_PATTERN, defineTool, newId, recordOutput } from '@cuadra/shared';
import { AGENT_VIEW_SCHEMA, MAX_INSTRUCTIONS, agents, agentView, type AgentDoc } from '../model.ts';

/** Creates an AI agent of the workspace, narrowed to the tools its patterns select. */
export const create = defineTool({
  name: 'agents.create',
  description:
    'Create an AI agent: a name unique in the workspace, an optional description, the model it runs on, its instructions ' +
    '(up to 20,000 characters), the tool-name patterns it may call (invoices.%, %:read, parties.create) and its status (active or paused; default active).',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'model'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
      description: { type: 'string', maxLength: 1000 },
      model: { type: 'string', minLength: 1, maxLength: 200 },
      instructions: { type: 'string', maxLength: MAX_INSTRUCTIONS },
      tools: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', maxLength: 100, pattern: TOOL_PATTERN.source } },
      status: { enum: ['active', 'paused'] },
    },
  },
  output: recordOutput('agent', AGENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const name = input.name.trim();
    const doc: AgentDoc = {
      _id: newId('agt'),
      workspace: ctx.workspace,
      name,
      name_lc: name.toLowerCase(),
      description: input.description ?? null,
      model: input.model.trim(),
      instructions: input.instructions ?? null,
      tools: input.tools ?? [],
      status: input.status ?? 'active',
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    try {
      await createPositioned(agents(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) {
        throw new CuadraError('conflict', `An agent named "${name}" already exists in this workspace.`);
      }
      throw err;
    }
    return { agent: agentView(doc) };
  },
});
