import { TOOL_PATTERN } from '@cuadra/shared';
import { BUDGET_SCHEMA, LIMITS_SCHEMA, MAX_INSTRUCTIONS, TRIGGER_SCHEMA } from './model.ts';

/** The fields agents.create and agents.update share (update makes each optional). */
export const AGENT_FIELDS = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
  description: { type: 'string', maxLength: 1000 },
  model: { type: 'string', minLength: 1, maxLength: 64, description: 'An ai_models id of the workspace, or "embedded" (the built-in SmolLM2-135M-Instruct).' },
  instructions: { type: 'string', maxLength: MAX_INSTRUCTIONS },
  tools: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', maxLength: 100, pattern: TOOL_PATTERN.source } },
  tool_values: {
    type: 'object', maxProperties: 50, additionalProperties: { type: 'object', maxProperties: 50 },
    description: 'Fixed arguments per tool name ({"tasks.create": {"project_id": "prj_…"}}): merged into every call of that tool; the model cannot change them.',
  },
  tool_fields: {
    type: 'object', maxProperties: 50,
    additionalProperties: { type: 'array', minItems: 1, maxItems: 50, uniqueItems: true, items: { type: 'string', maxLength: 200, pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)*$' } },
    description: 'The fields of a tool\'s output the model reads, per tool name ({"invoices.list": ["rows.id", "rows.number", "rows.customer.name", "rows.balance"]}: dotted paths, lists crossed): a small model reads a short result faster and answers better. A tool not named is read whole (less empty fields); the call\'s own answer is never cut.',
  },
  procedure: {
    anyOf: [{ type: 'null' }, { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)+$' } }],
    description: 'A fixed procedure: the tools the agent calls, in this order, one per step; the model writes each call\'s arguments and then its answer. null: the model chooses among its tools.',
  },
  budget: { ...BUDGET_SCHEMA, required: [] },
  limits: { ...LIMITS_SCHEMA, required: [] },
  trigger: { anyOf: [{ type: 'null' }, TRIGGER_SCHEMA] },
  status: { enum: ['active', 'paused'] },
} as const;
