import { createPositioned, localDate, newId } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import type { AgentDoc } from '../modules/agents/model.ts';
import { agentRuns, runQueue, type AgentRunDoc } from '../modules/agent_runs/model.ts';
import { EMBEDDED } from './llm.ts';
import { aiModels } from '../modules/ai_models/model.ts';
import { newTraceId } from './telemetry.ts';

const queuedListeners = new Set<() => void>();

/**
 * Calls `listener` whenever this process queues a run (the runtime takes it up at once instead of
 * at its next sweep). Returns the way to stop listening.
 */
export function onRunQueued(listener: () => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

/** A new run's id. */
export function newRunId(): string {
  return newId('run');
}

/**
 * A new queued run of `agent`. Its queue entry is written first, so no run ever exists that the
 * runtime's sweep cannot find (an entry whose run was never written is dropped after a minute).
 */
export async function createRun(
  db: Connection, agent: AgentDoc, input: string, trigger: AgentRunDoc['trigger'], requestedBy: AgentRunDoc['requested_by'], now: Date, id = newRunId(),
): Promise<AgentRunDoc> {
  const model = agent.model === EMBEDDED.id ? { name: EMBEDDED.name, currency: EMBEDDED.currency } : await aiModels(db).findOne({ _id: agent.model, workspace: agent.workspace }, { name: 1, currency: 1 }).lean();
  const run: AgentRunDoc = {
    _id: id, workspace: agent.workspace, agent_id: agent._id, agent_name: agent.name, model_id: agent.model, model_name: model?.name ?? agent.model,
    status: 'queued', stop_reason: null, input, output: null, error: null, steps: [],
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_micros: 0 }, currency: model?.currency ?? 'USD',
    limits: { max_steps: agent.limits?.max_steps ?? 8, max_seconds: agent.limits?.max_seconds ?? 300 }, active_ms: 0, waiting: null, executor: null, lease_until: null,
    attempts: 0, trigger, requested_by: requestedBy, spans: [], trace_id: newTraceId(), day: localDate(now), ended_applied: false,
    created_at: now, started_at: null, finished_at: null, updated_at: now,
  };
  await runQueue(db).updateOne({ _id: id }, { $setOnInsert: { workspace: agent.workspace, since: now } }, { upsert: true });
  await createPositioned(agentRuns(db), run);
  // After the caller's answer is on its way: the sweep would find the run anyway, a few hundred ms later.
  setImmediate(() => { for (const listener of queuedListeners) listener(); });
  return run;
}
