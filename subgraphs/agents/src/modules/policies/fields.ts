import { RISKS } from '@cuadra/shared';

/** JSON Schema of a policy's selectable parts, shared by policies.create and policies.update. */
export const policyFields = {
  name: { type: 'string', minLength: 1, maxLength: 120 },
  priority: { type: 'integer', minimum: -1000000, maximum: 1000000 },
  match: {
    type: 'object',
    additionalProperties: false,
    properties: {
      tools: { type: 'array', maxItems: 50, items: { type: 'string', pattern: '^[a-z0-9_.%]+(:(read|write|external|destructive))?$' } },
      risk: { type: 'array', maxItems: 4, uniqueItems: true, items: { enum: [...RISKS] } },
      actors: { type: 'array', maxItems: 4, uniqueItems: true, items: { enum: ['agent', 'api_key', 'oauth_app', 'member'] } },
      roles: { type: 'array', maxItems: 20, items: { type: 'string', pattern: '^[a-z0-9_]{1,40}$' } },
    },
  },
  conditions: {
    type: 'object',
    additionalProperties: false,
    properties: { amount_over: { type: 'integer', minimum: 0, description: 'Matches when the call moves more than this many minor units (cents).' } },
  },
  effect: { enum: ['allow', 'hold', 'ask', 'deny'] },
} as const;
