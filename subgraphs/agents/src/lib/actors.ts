import { TEXT_SCHEMA as TEXT } from '@cuadra/shared';

// Schemas of the governance views more than one module of this subgraph publishes. The views are
// made in the shared library (shared/src/governance); their schemas follow those types.

/** `Principal['actor']['type']`. */
export const ACTOR_TYPES = ['api_key', 'member', 'agent', 'oauth_app', 'service', 'visitor'] as const;

/** `{type, id}` of an actor (an approval's decider, a ledger entry's caller). */
export const ACTOR_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['type', 'id'],
  properties: { type: { enum: [...ACTOR_TYPES] }, id: TEXT },
} as const;
