import { defineGetTool } from '@cuadra/shared';
import { agentRuns, RUN_VIEW_SCHEMA, runView, type AgentRunDoc } from '../model.ts';

/** One run: its steps (model answers, tool calls and results), the held call it waits for, its usage and cost, its spans. */
export const get = defineGetTool<AgentRunDoc>({
  name: 'agent_runs.get',
  description: 'Get one agent run: status and why it stopped, each step (the model\'s answer, its tokens and cost, each tool call with its Idempotency-Key, outcome and result — secrets read "[redacted]"), '
    + 'the held call it waits for (waiting.approval_id), its total usage and cost (cost_micros: millionths of a minor unit of the currency) and its OpenTelemetry GenAI spans.',
  model: agentRuns,
  view: runView,
  viewSchema: RUN_VIEW_SCHEMA,
  key: 'run',
  what: 'agent run',
});
