import { DATE_TIME_SCHEMA as DATE_TIME, RISKS, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { ACTOR_TYPES } from '../../lib/actors.ts';

// The view is made in the shared library (`Policy`, shared/src/governance/policies.ts); its schema
// is written here, beside the only tools that publish it, and must follow that type when it changes.

/** JSON Schema of a `Policy` (shared/src/governance/policies.ts), as policies.* answer it. */
export const POLICY_SCHEMA = {
  type: 'object', additionalProperties: false,
  // `conditions` is optional in the stored shape; policies.create always writes it (`{}` when none).
  required: ['id', 'workspace', 'name', 'priority', 'match', 'effect', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    workspace: TEXT,
    name: TEXT,
    priority: { type: 'integer' },
    match: {
      type: 'object', additionalProperties: false,
      properties: {
        tools: { type: 'array', items: TEXT },
        risk: { type: 'array', items: { enum: [...RISKS] } },
        actors: { type: 'array', items: { enum: [...ACTOR_TYPES] } },
        roles: { type: 'array', items: TEXT },
      },
    },
    conditions: {
      type: 'object', additionalProperties: false,
      properties: {
        amount_over: { type: 'integer', minimum: 0 },
        facts: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 } } },
      },
    },
    effect: { enum: ['allow', 'hold', 'ask', 'deny'] },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;
