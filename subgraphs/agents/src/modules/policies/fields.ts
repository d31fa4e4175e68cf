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
      actors: { type: 'array', maxItems: 5, uniqueItems: true, items: { enum: ['agent', 'api_key', 'oauth_app', 'member', 'visitor'] } },
      roles: { type: 'array', maxItems: 20, items: { type: 'string', pattern: '^[a-z0-9_]{1,40}$' } },
    },
  },
  conditions: {
    type: 'object',
    additionalProperties: false,
    properties: {
      amount_over: { type: 'integer', minimum: 0, description: 'Matches when the call moves more than this many minor units (cents).' },
      facts: {
        type: 'object', maxProperties: 10, propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' },
        additionalProperties: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 64 } },
        description: 'Matches when each named fact the tool declares about the call is one of the values (deals.move, win and lose: stage_kind open, won or lost; pipeline key).',
      },
    },
  },
  effect: { enum: ['allow', 'hold', 'ask', 'deny'] },
} as const;
