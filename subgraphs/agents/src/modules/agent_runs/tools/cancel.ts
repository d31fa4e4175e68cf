import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { agentRuns, RUN_VIEW_SCHEMA, runView } from '../model.ts';

/** Stops a run that has not ended; a call it holds for a person is rejected with it. */
export const cancel = defineTool({
  name: 'agent_runs.cancel',
  description: 'Cancel an agent run that has not ended (queued, running, waiting_approval). It takes no further step; a tool call already on its way finishes and stays on the ledger; '
    + 'a call it waits on a person for is rejected, so it never runs. A run that has ended is refused with conflict.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const cancelled = await agentRuns(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: { $in: ['queued', 'running', 'waiting_approval'] } },
      { $set: { status: 'cancelled', stop_reason: 'cancelled', error: null, finished_at: ctx.now, executor: null, lease_until: null, updated_at: ctx.now, announce: true } },
      { returnDocument: 'before' },
    ).lean();
    if (!cancelled) {
      const existing = await agentRuns(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }, { status: 1 }).lean();
      if (!existing) throw new CuadraError('not_found', `No agent run ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `This run has ended (${existing.status}); only a run that has not ended can be cancelled.`);
    }
    if (cancelled.status === 'waiting_approval' && cancelled.waiting) {
      // Still pending: rejected, so the held call never runs. Already approved: it runs (a person said yes), and the run ignores it.
      await ctx.governance.approvals.decide(
        ctx.workspace, cancelled.waiting.approval_id, 'rejected', { type: ctx.principal.actor.type, id: ctx.principal.actor.id, ...(ctx.principal.person ? { person: ctx.principal.person } : {}) },
        'The agent run that asked for it was cancelled.', ctx.now,
      );
    }
    const after = await agentRuns(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    return { run: runView(after!) };
  },
});
