import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { EMBEDDED_MODEL_ID } from '../../../lib/embedded.ts';
import { createRun } from '../../../lib/runs.ts';
import { aiModels } from '../../ai_models/model.ts';
import { RUN_VIEW_SCHEMA, runView } from '../../agent_runs/model.ts';
import { agents } from '../model.ts';

/** Starts a run of an agent: queued at once, worked on by the runtime. */
export const run = defineTool({
  name: 'agents.run',
  description: 'Start a run of an agent on a task (input: what to do, up to 20,000 characters). Answers the run at once, queued; follow it with agent_runs.get. '
    + 'Each tool call of the run goes through the pipeline as the agent (its role and patterns, the workspace\'s policies — a held call puts the run in waiting_approval until a person decides —, '
    + 'rate limits, the ledger with the run\'s id); a resumed run never makes a call twice. It stops at its step and time limits or its daily budget, with a clear status.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['agent_id', 'input'],
    properties: { agent_id: ID_SCHEMA, input: { type: 'string', minLength: 1, maxLength: 20_000, pattern: '\\S' } },
  },
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const agent = await agents(ctx.db).findOne({ _id: input.agent_id, workspace: ctx.workspace }).lean();
    if (!agent) throw new CuadraError('not_found', `No agent ${input.agent_id} exists in this workspace.`);
    if (agent.status !== 'active') throw new CuadraError('conflict', `This agent is ${agent.status}; only an active agent takes runs.`);
    if (agent.model !== EMBEDDED_MODEL_ID && !(await aiModels(ctx.db).exists({ _id: agent.model, workspace: ctx.workspace, status: 'active' }))) {
      throw new CuadraError('conflict', `The agent's model ${agent.model} is not an active model of this workspace; set one with agents.update.`);
    }
    const requestedBy = { type: ctx.principal.actor.type, id: ctx.principal.actor.id, ...(ctx.principal.person ? { person: ctx.principal.person } : {}) };
    const created = await createRun(ctx.db, agent, input.input, { kind: 'manual', ref: null }, requestedBy, ctx.now);
    return { run: runView(created) };
  },
});
