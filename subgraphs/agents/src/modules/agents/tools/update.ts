import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { checkGrant, checkModel, checkToolFields, checkToolValues, triggerOf, triggerStart } from '../../../lib/agent-config.ts';
import { AGENT_FIELDS } from '../fields.ts';
import { AGENT_VIEW_SCHEMA, agents, agentView, DEFAULT_LIMITS, type AgentDoc } from '../model.ts';

/**
 * Changes an agent. The agent itself never reaches this tool (its role `agent` has no agents.*
 * write), so it cannot widen its own tools, budget or limits.
 */
export const update = defineTool({
  name: 'agents.update',
  description: 'Change an agent: name, description, model, instructions, tool patterns (never beyond what the caller reaches), fixed arguments, budget, limits, trigger, '
    + 'or status (active, paused). Runs already started keep the settings they started with, except that a paused agent\'s queued runs wait.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: { id: ID_SCHEMA, ...AGENT_FIELDS },
  },
  output: recordOutput('agent', AGENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const before = await agents(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!before) throw new CuadraError('not_found', `No agent ${input.id} exists in this workspace.`);
    if (before.status === 'archived') throw new CuadraError('conflict', 'This agent is archived; archived agents are not changed.');
    const set: Partial<AgentDoc> = { updated_at: ctx.now };
    if (input.name !== undefined) {
      set.name = input.name.trim();
      set.name_lc = set.name.toLowerCase();
    }
    if (input.description !== undefined) set.description = input.description;
    if (input.model !== undefined) set.model = await checkModel(ctx.db, ctx.workspace, input.model);
    if (input.instructions !== undefined) set.instructions = input.instructions;
    if (input.tools !== undefined) {
      checkGrant(ctx.principal, input.tools);
      set.tools = input.tools;
    }
    if (input.tool_values !== undefined) set.tool_values = checkToolValues(input.tool_values);
    if (input.tool_fields !== undefined) set.tool_fields = checkToolFields(input.tool_fields);
    if (input.procedure !== undefined) set.procedure = input.procedure;
    if (input.budget !== undefined) set.budget = { daily_tokens: before.budget?.daily_tokens ?? null, daily_cost: before.budget?.daily_cost ?? null, ...input.budget };
    if (input.limits !== undefined) set.limits = { max_steps: before.limits?.max_steps ?? DEFAULT_LIMITS.max_steps, max_seconds: before.limits?.max_seconds ?? DEFAULT_LIMITS.max_seconds, ...input.limits };
    if (input.trigger !== undefined) {
      const changed = triggerOf(input.trigger, ctx.now);
      Object.assign(set, changed, { ledger_seen_seq: await triggerStart(changed.trigger, ctx) });
    }
    if (input.status !== undefined) set.status = input.status;
    let after;
    try {
      after = await agents(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace, status: { $ne: 'archived' } }, { $set: set }, { returnDocument: 'after' }).lean();
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `An agent named "${set.name}" already exists in this workspace.`);
      throw err;
    }
    if (!after) throw new CuadraError('conflict', 'This agent was archived meanwhile.');
    return { agent: agentView(after) };
  },
});
