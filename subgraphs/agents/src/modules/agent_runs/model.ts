import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** A run's states (issue 37): queued → running ⇄ waiting_approval → succeeded | failed | cancelled | timed_out. */
export const RUN_STATUSES = ['queued', 'running', 'waiting_approval', 'succeeded', 'failed', 'cancelled', 'timed_out'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** The states a run ends in. */
export const FINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled', 'timed_out'];

/** Why a run stopped, beside its status. */
export const STOP_REASONS = [
  'completed', 'max_steps', 'max_time', 'budget_exhausted', 'cancelled', 'model_error', 'model_unavailable', 'outcome_unknown', 'tool_unavailable', 'agent_unavailable',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** One tool call a step asked for, and what became of it. */
export interface RunCall {
  /** The model's id of the call (`call_…`): the tool result answers it. */
  id: string;
  /** The Cuadra tool (`invoices.list`), or `mcp_servers.call` for an outside MCP server's tool. */
  tool: string;
  /** The name the model used (`invoices__list`, `mcp__files__read`). */
  name: string;
  /** The arguments sent: the model's, with the agent's fixed values merged over them. */
  arguments: Record<string, unknown>;
  /** `run_…:s<step>:c<call>`: a resumed run sends the same key, so a call is never made twice. */
  idempotency_key: string;
  /** pending (not answered yet), done (200), held (waiting for a person), refused (4xx), rejected (a person said no), unknown (502: whether it ran is not known). */
  status: 'pending' | 'done' | 'held' | 'refused' | 'rejected' | 'unknown';
  http_status: number | null;
  /** What the model is given: the answer's JSON text, cut to the runtime's bound. Secrets in it read "[redacted]". */
  result: string | null;
  approval_id: string | null;
  duration_ms: number | null;
}

/** Token counts and cost of a call or a run. */
export interface RunUsage { input_tokens: number; output_tokens: number; cached_tokens: number; cost_micros: number }

/** One model call of a run and the tool calls it asked for. */
export interface RunStep {
  n: number;
  at: Date;
  /** The model's answer: its text and/or its tool calls, and why it stopped. */
  content: string | null;
  finish_reason: string | null;
  usage: RunUsage;
  duration_ms: number;
  /** Whether this step's usage is in the rollups (kept on write; a dead process's step is finished by the next). */
  usage_applied: boolean;
  calls: RunCall[];
}

/** One OpenTelemetry GenAI span of the run (invoke_agent, chat, execute_tool), as recorded. */
export interface RunSpan {
  trace_id: string; span_id: string; parent_span_id: string | null; name: string; start: string; end: string;
  status: 'ok' | 'error'; attributes: Record<string, string | number | boolean | string[]>;
}

/** An agent run, as stored. `_id` is `run_…`. */
export interface AgentRunDoc {
  _id: string;
  workspace: string;
  agent_id: string;
  agent_name: string;
  model_id: string;
  model_name: string;
  status: RunStatus;
  stop_reason: StopReason | null;
  /** The task as given (agents.run's input, or the trigger's). */
  input: string;
  /** The model's final answer, once succeeded. */
  output: string | null;
  error: string | null;
  steps: RunStep[];
  usage: RunUsage;
  currency: string;
  /** The agent's limits when the run started. */
  limits: { max_steps: number; max_seconds: number };
  /** Working time so far (time waiting for a person is not counted). */
  active_ms: number;
  /** The held call the run waits for. */
  waiting: { approval_id: string; step: number; call: string; tool: string } | null;
  /** Who may work on it until when: a run is worked on by one process at a time; a dead one's lease runs out and another resumes it. */
  executor: string | null;
  lease_until: Date | null;
  /** How many times a process took the run up (1 for a run that never stopped on the way). */
  attempts: number;
  trigger: { kind: 'manual' | 'schedule' | 'ledger' | 'event'; ref: string | null };
  requested_by: { type: string; id: string; person?: string };
  spans: RunSpan[];
  trace_id: string;
  /** The workspace day it was created (the rollups' day). */
  day: string;
  /** Whether its end is counted in the rollups (set after; a run ended by a dead process is counted by the next sweep). */
  ended_applied: boolean;
  /** Set with its end, until its end's webhook messages are queued (modules/webhooks: the outbox the deliverer drains). */
  announce?: boolean;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
}

const runSchema = new Schema<AgentRunDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    agent_id: { type: String, required: true },
    agent_name: { type: String, required: true },
    model_id: { type: String, required: true },
    model_name: { type: String, required: true },
    status: { type: String, required: true },
    stop_reason: { type: String, default: null },
    input: { type: String, required: true },
    output: { type: String, default: null },
    error: { type: String, default: null },
    steps: { type: Schema.Types.Mixed, default: [] },
    usage: { type: Schema.Types.Mixed, required: true },
    currency: { type: String, required: true },
    limits: { type: Schema.Types.Mixed, required: true },
    active_ms: { type: Number, default: 0 },
    waiting: { type: Schema.Types.Mixed, default: null },
    executor: { type: String, default: null },
    lease_until: { type: Date, default: null },
    attempts: { type: Number, default: 0 },
    trigger: { type: Schema.Types.Mixed, required: true },
    requested_by: { type: Schema.Types.Mixed, required: true },
    spans: { type: Schema.Types.Mixed, default: [] },
    trace_id: { type: String, required: true },
    day: { type: String, required: true },
    ended_applied: { type: Boolean, default: false },
    announce: { type: Boolean, default: undefined },
    created_at: { type: Date, required: true },
    started_at: { type: Date, default: null },
    finished_at: { type: Date, default: null },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
runSchema.index({ workspace: 1, agent_id: 1 });
runSchema.index({ announce: 1 }, { sparse: true });
addPositions(runSchema);

/** The agent_runs collection. */
export function agentRuns(db: Connection): Model<AgentRunDoc> {
  return modelOn<AgentRunDoc>(db, 'AgentRun', runSchema, 'agent_runs');
}

/**
 * The runs that need a process: one small document per run not yet ended (queued, running,
 * waiting for a person), written before the run and removed once it ended, so the runtime's
 * sweep reads a handful of documents, never the runs themselves.
 */
export interface RunQueueDoc { _id: string; workspace: string; since: Date }

const queueSchema = new Schema<RunQueueDoc>({ _id: String, workspace: String, since: Date }, { versionKey: false });

/** The run queue. */
export function runQueue(db: Connection): Model<RunQueueDoc> {
  return modelOn<RunQueueDoc>(db, 'AgentRunQueue', queueSchema, 'agent_run_queue');
}

const COUNT = { type: 'integer', minimum: 0 } as const;
/** JSON Schema of a usage. */
export const USAGE_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['input_tokens', 'output_tokens', 'cached_tokens', 'cost_micros'],
  properties: { input_tokens: COUNT, output_tokens: COUNT, cached_tokens: COUNT, cost_micros: { ...COUNT, description: 'Millionths of a minor unit of the currency.' } },
} as const;

const CALL_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'tool', 'name', 'arguments', 'idempotency_key', 'status', 'http_status', 'result', 'approval_id', 'duration_ms'],
  properties: {
    id: TEXT, tool: TEXT, name: TEXT, arguments: { type: 'object' }, idempotency_key: TEXT,
    status: { enum: ['pending', 'done', 'held', 'refused', 'rejected', 'unknown'] }, http_status: { type: ['integer', 'null'] },
    result: NULLABLE_TEXT, approval_id: NULLABLE_TEXT, duration_ms: { type: ['integer', 'null'] },
  },
} as const;

const STEP_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['n', 'at', 'content', 'finish_reason', 'usage', 'duration_ms', 'calls'],
  properties: { n: { type: 'integer' }, at: DATE_TIME, content: NULLABLE_TEXT, finish_reason: NULLABLE_TEXT, usage: USAGE_SCHEMA, duration_ms: { type: 'integer' }, calls: { type: 'array', items: CALL_SCHEMA } },
} as const;

const SPAN_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['trace_id', 'span_id', 'parent_span_id', 'name', 'start', 'end', 'status', 'attributes'],
  properties: { trace_id: TEXT, span_id: TEXT, parent_span_id: NULLABLE_TEXT, name: TEXT, start: DATE_TIME, end: DATE_TIME, status: { enum: ['ok', 'error'] }, attributes: { type: 'object' } },
} as const;

/** JSON Schema of {@link runView}. */
export const RUN_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'agent_id', 'agent_name', 'model_id', 'model_name', 'status', 'stop_reason', 'input', 'output', 'error', 'usage', 'currency', 'limits', 'active_ms', 'waiting', 'attempts', 'trigger', 'requested_by', 'trace_id', 'created_at', 'started_at', 'finished_at', 'steps', 'spans'],
  properties: {
    id: TEXT, agent_id: TEXT, agent_name: TEXT, model_id: TEXT, model_name: TEXT,
    status: { enum: [...RUN_STATUSES] }, stop_reason: { anyOf: [{ type: 'null' }, { enum: [...STOP_REASONS] }] },
    input: TEXT, output: NULLABLE_TEXT, error: NULLABLE_TEXT, usage: USAGE_SCHEMA, currency: TEXT,
    limits: { type: 'object', additionalProperties: false, required: ['max_steps', 'max_seconds'], properties: { max_steps: { type: 'integer' }, max_seconds: { type: 'integer' } } },
    active_ms: { type: 'integer' },
    waiting: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['approval_id', 'step', 'call', 'tool'],
        properties: { approval_id: TEXT, step: { type: 'integer' }, call: TEXT, tool: TEXT },
      }],
    },
    attempts: { type: 'integer' },
    trigger: { type: 'object', additionalProperties: false, required: ['kind', 'ref'], properties: { kind: { enum: ['manual', 'schedule', 'ledger', 'event'] }, ref: NULLABLE_TEXT } },
    requested_by: { type: 'object', additionalProperties: false, required: ['type', 'id'], properties: { type: TEXT, id: TEXT, person: TEXT } },
    trace_id: TEXT, created_at: DATE_TIME, started_at: { anyOf: [DATE_TIME, { type: 'null' }] }, finished_at: { anyOf: [DATE_TIME, { type: 'null' }] },
    steps: { type: 'array', items: STEP_SCHEMA },
    spans: { type: 'array', items: SPAN_SCHEMA },
  },
} as const;

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The public shape of a run: its steps, its held call, its cost, its spans. */
export function runView(r: AgentRunDoc) {
  return {
    id: r._id, agent_id: r.agent_id, agent_name: r.agent_name, model_id: r.model_id, model_name: r.model_name, status: r.status, stop_reason: r.stop_reason,
    input: r.input, output: r.output, error: r.error, usage: r.usage, currency: r.currency, limits: r.limits, active_ms: Math.round(r.active_ms), waiting: r.waiting,
    attempts: r.attempts, trigger: r.trigger, requested_by: r.requested_by, trace_id: r.trace_id, created_at: iso(r.created_at)!, started_at: iso(r.started_at), finished_at: iso(r.finished_at),
    steps: r.steps.map((s) => ({
      n: s.n, at: iso(s.at)!, content: s.content, finish_reason: s.finish_reason, usage: s.usage, duration_ms: Math.round(s.duration_ms),
      calls: s.calls.map((c) => ({ ...c })),
    })),
    spans: r.spans,
  };
}

/** Search over the agent's name, the input and the output (agent_runs.list and the records source). */
export function runMatches(r: AgentRunDoc, needle: string): boolean {
  return containsText(r.agent_name, needle) || containsText(r.input, needle) || containsText(r.output, needle);
}
