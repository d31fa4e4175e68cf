import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { checkGrant, checkModel, checkToolFields, checkToolValues, triggerOf, triggerStart } from '../../../lib/agent-config.ts';
import { AGENT_FIELDS } from '../fields.ts';
import { AGENT_VIEW_SCHEMA, agents, agentView, DEFAULT_LIMITS, type AgentDoc } from '../model.ts';

/** Creates an AI agent of the workspace, narrowed to the tools its patterns select. */
export const create = defineTool({
  name: 'agents.create',
  description:
    'Create an AI agent: a name unique in the workspace, an optional description, the model it runs on (an ai_models id or "embedded"), its instructions '
    + '(up to 20,000 characters), the tool-name patterns it may call (invoices.%, %:read, tasks.create) — never more than the caller reaches —, fixed arguments per tool, the fields of a tool\'s output its model reads, '
    + 'a daily budget of tokens and cost, limits per run (steps, seconds), an optional trigger (a cron schedule, actions on the ledger, or a domain event such as invoice.overdue) and its status. '
    + 'Every call of its runs goes through the pipeline as the agent itself: role agent (no governance tools), its patterns, the workspace\'s policies and approvals, the ledger.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'model'],
    properties: AGENT_FIELDS,
  },
  output: recordOutput('agent', AGENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const name = input.name.trim();
    const tools = input.tools ?? [];
    checkGrant(ctx.principal, tools);
    const { trigger, next_run_at } = triggerOf(input.trigger, ctx.now);
    const doc: AgentDoc = {
      _id: newId('agt'),
      workspace: ctx.workspace,
      name,
      name_lc: name.toLowerCase(),
      description: input.description ?? null,
      model: await checkModel(ctx.db, ctx.workspace, input.model),
      instructions: input.instructions ?? null,
      tools,
      tool_values: checkToolValues(input.tool_values ?? {}),
      tool_fields: checkToolFields(input.tool_fields ?? {}),
      procedure: input.procedure ?? null,
      budget: { daily_tokens: input.budget?.daily_tokens ?? null, daily_cost: input.budget?.daily_cost ?? null },
      limits: { max_steps: input.limits?.max_steps ?? DEFAULT_LIMITS.max_steps, max_seconds: input.limits?.max_seconds ?? DEFAULT_LIMITS.max_seconds },
      trigger,
      next_run_at,
      ledger_seen_seq: await triggerStart(trigger, ctx),
      status: input.status ?? 'active',
      created_by: { type: ctx.principal.actor.type, id: ctx.principal.actor.id, ...(ctx.principal.person ? { person: ctx.principal.person } : {}) },
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
