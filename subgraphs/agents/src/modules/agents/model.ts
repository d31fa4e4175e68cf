import { addPositions, containsText, DOMAIN_EVENT_TYPES, DATE_TIME_SCHEMA as DATE_TIME, type DomainEventType, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Limits of a run when the agent does not say: 8 model calls, 5 minutes of working time. */
export const DEFAULT_LIMITS = { max_steps: 8, max_seconds: 300 } as const;

/** Longest accepted instructions, in characters. */
export const MAX_INSTRUCTIONS = 20_000;

/** An agent as stored. `_id` is our own prefixed string id (`agt_…`), never a Mongo ObjectId. */
export interface AgentDoc {
  _id: string;
  /** Every read and write filters on this: the workspace seal. */
  workspace: string;
  name: string;
  /**
   * Lower-cased, trimmed name: the unique index is on it, so "Cobranza" and "cobranza" cannot
   * both exist (people and other agents call an agent by its name); search uses it too.
   */
  name_lc: string;
  description: string | null;
  /**
   * The model it runs on: an `ai_models` id of the workspace (`aim_…`) or `embedded` (the built-in
   * SmolLM2-135M-Instruct). Agents made before ai_models existed may hold free text: their runs fail
   * saying the model is unknown until it is set.
   */
  model: string;
  /** System instructions; null when the agent runs on the model's defaults. */
  instructions: string | null;
  /**
   * Tool-name patterns the agent may call (`invoices.%`, `%:read`): the grammar of API key
   * patterns (shared `TOOL_PATTERN`), so an agent is narrowed by the same rules as a key.
   */
  tools: string[];
  /**
   * Fixed arguments per tool (`{"tasks.create": {"project_id": "prj_…"}}`), as a canvas action's
   * `values`: merged into every call of that tool and taken out of the schema the model sees, so
   * the model cannot change them (and a small model has less to get wrong).
   */
  tool_values: Record<string, Record<string, unknown>>;
  /**
   * The fields of a tool's output its model reads, per tool (`{"invoices.list": ["rows.number",
   * "rows.due_date"]}`, paths of lib/model-view.ts): a small model reads a short result faster and
   * answers better from it. The call's caller-visible answer is not cut; a tool not named is read whole.
   */
  tool_fields: Record<string, string[]>;
  /**
   * A fixed procedure: the tools it calls, in this order, one per step (the model writes each
   * call's arguments, then its answer once the procedure is done); null: the model chooses among
   * its tools. The way to run a small model hard-constrained.
   */
  procedure: string[] | null;
  /** Daily budget in the workspace's day: tokens (input + output) and cost (minor units of the model's currency); null: no limit. */
  budget: { daily_tokens: number | null; daily_cost: number | null };
  /** A run stops at `max_steps` model calls or `max_seconds` of working time (time waiting for a person not counted). */
  limits: { max_steps: number; max_seconds: number };
  /** What starts a run besides agents.run: a schedule (cron, workspace time) or an action on the ledger; null: only agents.run. */
  trigger: AgentTrigger | null;
  /** The next time its schedule starts a run (kept on write, read by the runtime's sweep). */
  next_run_at: Date | null;
  /** A ledger or event trigger's position: the last entry of the workspace's chain it has looked at. */
  ledger_seen_seq: number | null;
  /** A paused agent keeps its configuration but takes no work; an archived one is retired. */
  status: 'active' | 'paused' | 'archived';
  /** Who created it (the actor and, when there is one, the person). */
  created_by: { type: string; id: string; person?: string } | null;
  created_at: Date;
  updated_at: Date;
}

const agentSchema = new Schema<AgentDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    name_lc: { type: String, required: true },
    description: { type: String, default: null },
    model: { type: String, required: true },
    instructions: { type: String, default: null },
    tools: { type: [String], default: [] },
    tool_values: { type: Schema.Types.Mixed, default: {} },
    tool_fields: { type: Schema.Types.Mixed, default: {} },
    procedure: { type: [String], default: null },
    budget: { type: Schema.Types.Mixed, default: () => ({ daily_tokens: null, daily_cost: null }) },
    limits: { type: Schema.Types.Mixed, default: () => ({ ...DEFAULT_LIMITS }) },
    trigger: { type: Schema.Types.Mixed, default: null },
    next_run_at: { type: Date, default: null },
    ledger_seen_seq: { type: Number, default: null },
    created_by: { type: Schema.Types.Mixed, default: null },
    status: { type: String, required: true, default: 'active' },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
agentSchema.index({ workspace: 1, created_at: -1 });
agentSchema.index({ workspace: 1, name_lc: 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(agentSchema);

/** What starts an agent's runs besides agents.run. */
export type AgentTrigger =
  | { kind: 'schedule'; cron: string; input: string }
  | { kind: 'ledger'; tools: string[]; outcome: string; input: string }
  | { kind: 'event'; event: DomainEventType; input: string };

/** The agents collection on this subgraph's connection. */
export function agents(db: Connection): Model<AgentDoc> {
  return modelOn<AgentDoc>(db, 'Agent', agentSchema, 'agents');
}


const NULLABLE_COUNT = { type: ['integer', 'null'], minimum: 1 } as const;

/** A daily budget: tokens and cost in minor units (null: no limit). */
export const BUDGET_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['daily_tokens', 'daily_cost'],
  properties: { daily_tokens: { ...NULLABLE_COUNT, maximum: 1_000_000_000 }, daily_cost: { ...NULLABLE_COUNT, maximum: 1_000_000_000_000 } },
} as const;

/** A run's limits. */
export const LIMITS_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['max_steps', 'max_seconds'],
  properties: { max_steps: { type: 'integer', minimum: 1, maximum: 50 }, max_seconds: { type: 'integer', minimum: 10, maximum: 3600 } },
} as const;

/** A trigger: a cron schedule in the workspace's time, actions on the ledger matching tool patterns, or a domain event recorded on the ledger (`invoice.overdue`). */
export const TRIGGER_SCHEMA = {
  oneOf: [
    {
      type: 'object', additionalProperties: false, required: ['kind', 'cron'],
      properties: { kind: { const: 'schedule' }, cron: { type: 'string', minLength: 9, maxLength: 100 }, input: { type: 'string', maxLength: 2000 } },
    },
    {
      type: 'object', additionalProperties: false, required: ['kind', 'tools'],
      properties: {
        kind: { const: 'ledger' },
        tools: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', maxLength: 100, pattern: '^[a-z0-9_.%]+(:(read|write|external|destructive))?$' } },
        outcome: { type: 'string', minLength: 1, maxLength: 40 },
        input: { type: 'string', maxLength: 2000 },
      },
    },
    {
      type: 'object', additionalProperties: false, required: ['kind', 'event'],
      description: 'A run per occurrence of a domain event on the ledger (shared/src/events.ts): invoice.overdue, an invoice still open after its due date.',
      properties: { kind: { const: 'event' }, event: { enum: [...DOMAIN_EVENT_TYPES] }, input: { type: 'string', maxLength: 2000 } },
    },
  ],
} as const;

/** JSON Schema of {@link agentView}: what every tool answering an agent gives. */
export const AGENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'description', 'model', 'instructions', 'tools', 'tool_values', 'tool_fields', 'procedure', 'budget', 'limits', 'trigger', 'principal', 'status', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    name: TEXT,
    description: NULLABLE_TEXT,
    model: TEXT,
    instructions: NULLABLE_TEXT,
    tools: { type: 'array', items: TEXT },
    tool_values: { type: 'object', additionalProperties: { type: 'object' } },
    tool_fields: { type: 'object', additionalProperties: { type: 'array', items: TEXT } },
    procedure: { anyOf: [{ type: 'null' }, { type: 'array', items: TEXT }] },
    budget: BUDGET_SCHEMA,
    limits: LIMITS_SCHEMA,
    trigger: { anyOf: [{ type: 'null' }, TRIGGER_SCHEMA] },
    /** Who the agent acts as on every call of its runs: role `agent`, narrowed by `tools`. */
    principal: {
      type: 'object', additionalProperties: false, required: ['role', 'actor', 'patterns'],
      properties: { role: { const: 'agent' }, actor: { type: 'object', additionalProperties: false, required: ['type', 'id'], properties: { type: { const: 'agent' }, id: TEXT } }, patterns: { type: 'array', items: TEXT } },
    },
    status: { enum: ['active', 'paused', 'archived'] },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** The public shape of an agent (tool output). */
export function agentView(a: AgentDoc) {
  return {
    id: a._id,
    name: a.name,
    description: a.description,
    model: a.model,
    instructions: a.instructions,
    tools: a.tools,
    tool_values: a.tool_values ?? {},
    tool_fields: a.tool_fields ?? {},
    procedure: a.procedure ?? null,
    budget: { daily_tokens: a.budget?.daily_tokens ?? null, daily_cost: a.budget?.daily_cost ?? null },
    limits: { max_steps: a.limits?.max_steps ?? DEFAULT_LIMITS.max_steps, max_seconds: a.limits?.max_seconds ?? DEFAULT_LIMITS.max_seconds },
    trigger: a.trigger ?? null,
    principal: { role: 'agent' as const, actor: { type: 'agent' as const, id: a._id }, patterns: a.tools },
    status: a.status,
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}

/** Whether an agent matches a lower-cased search term: its name, description or model. agents.list and the `agents` records source search the same way. */
export function agentMatches(a: AgentDoc, needle: string): boolean {
  return a.name_lc.includes(needle) || containsText(a.description, needle) || containsText(a.model, needle);
}
