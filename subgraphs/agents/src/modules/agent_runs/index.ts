import { defineModule } from '@cuadra/shared';
import { budgets, modelMinutes, usageRollups } from '../../lib/usage.ts';
import { agentRunsMetric, llmUsageMetric } from './metrics.ts';
import { agentRuns, runQueue } from './model.ts';
import { agentRunsSource } from './sources.ts';
import { cancel } from './tools/cancel.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';

/** Agent runs: the durable record of each run (steps, held call, usage, spans), and the usage metrics kept on write. */
export const agentRunsModule = defineModule({
  name: 'agent_runs',
  tools: [list, get, cancel],
  models: [agentRuns, runQueue, usageRollups, budgets, modelMinutes],
  listed: [{ model: agentRuns }],
  reads: { sources: { agent_runs: agentRunsSource }, metrics: { agent_runs: agentRunsMetric, llm_usage: llmUsageMetric } },
  readGuards: { 'Query.agentRun': 'agent_runs', 'Query.agentRuns': 'agent_runs', AgentRun: 'agent_runs' },
});
