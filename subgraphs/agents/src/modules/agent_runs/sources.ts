import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { agentRuns, runMatches, type AgentRunDoc } from './model.ts';

function runRow(r: AgentRunDoc) {
  return {
    id: r._id, agent_id: r.agent_id, agent_name: r.agent_name, model_name: r.model_name, status: r.status, stop_reason: r.stop_reason, steps: r.steps.length,
    input_tokens: r.usage.input_tokens, output_tokens: r.usage.output_tokens, cost_micros: r.usage.cost_micros, currency: r.currency,
    waiting_approval_id: r.waiting?.approval_id ?? null, created_at: new Date(r.created_at).toISOString(), finished_at: r.finished_at ? new Date(r.finished_at).toISOString() : null,
  };
}

const page = defineSource<AgentRunDoc>({ model: agentRuns, search: runMatches, row: runRow });

/**
 * records.list `agent_runs`: newest first, by cursor; search the agent's name, the task and the
 * answer. `status` is ignored for this source (specification §2.5); `ref` names an agent.
 */
export const agentRunsSource: SourceReader = (q, ctx) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source agent_runs takes no kind.', { field: '/kind' });
  const { status: _ignored, ref, ...rest } = q;
  if (ref === undefined) return page(rest, ctx);
  // One agent's runs: the same page, kept to that agent.
  const byAgent = defineSource<AgentRunDoc>({ model: agentRuns, search: runMatches, kinds: { agent: { agent_id: ref } }, row: runRow });
  return byAgent({ ...rest, kind: 'agent' }, ctx);
};
