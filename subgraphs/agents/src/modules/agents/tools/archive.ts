import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { AGENT_VIEW_SCHEMA, agents, agentView } from '../model.ts';

/** Retires an agent: no new runs; its history stays. */
export const archive = defineTool({
  name: 'agents.archive',
  description: 'Archive an agent: it takes no new runs (agents.run refuses, its trigger stops); its runs and their ledger entries stay. Runs it has in progress finish.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('agent', AGENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await agents(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: { $ne: 'archived' } },
      { $set: { status: 'archived', trigger: null, next_run_at: null, updated_at: ctx.now } }, { returnDocument: 'after' },
    ).lean();
    if (after) return { agent: agentView(after) };
    const exists = await agents(ctx.db).exists({ _id: input.id, workspace: ctx.workspace });
    if (!exists) throw new CuadraError('not_found', `No agent ${input.id} exists in this workspace.`);
    throw new CuadraError('conflict', 'This agent is archived already.');
  },
});
