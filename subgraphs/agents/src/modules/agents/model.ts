import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

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
  /** Model identifier as its provider names it; free text until the ai_models records exist. */
  model: string;
  /** System instructions; null when the agent runs on the model's defaults. */
  instructions: string | null;
  /**
   * Tool-name patterns the agent may call (`invoices.%`, `%:read`): the grammar of API key
   * patterns (shared `TOOL_PATTERN`), so an agent is narrowed by the same rules as a key.
   */
  tools: string[];
  /** A paused agent keeps its configuration but takes no work. */
  status: 'active' | 'paused';
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
    status: { type: String, required: true, default: 'active' },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
agentSchema.index({ workspace: 1, created_at: -1 });
agentSchema.index({ workspace: 1, name_lc: 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(agentSchema);

/** The agents collection on this subgraph's connection. */
export function agents(db: Connection): Model<AgentDoc> {
  return modelOn<AgentDoc>(db, 'Agent', agentSchema, 'agents');
}


/** JSON Schema of {@link agentView}: what every tool answering an agent gives. */
export const AGENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'description', 'model', 'instructions', 'tools', 'status', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    name: TEXT,
    description: NULLABLE_TEXT,
    model: TEXT,
    instructions: NULLABLE_TEXT,
    tools: { type: 'array', items: TEXT },
    status: { enum: ['active', 'paused'] },
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
    status: a.status,
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}

/** Whether an agent matches a lower-cased search term: its name, description or model. agents.list and the `agents` records source search the same way. */
export function agentMatches(a: AgentDoc, needle: string): boolean {
  return a.name_lc.includes(needle) || containsText(a.description, needle) || containsText(a.model, needle);
}
