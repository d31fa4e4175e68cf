import { CURSOR_SCHEMA } from '@cuadra/shared';

/** The input of the gateway's store-backed list tools: one bounded page by cursor (CONTRACT §9). */
export const PAGE_INPUT = {
  type: 'object', additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA },
} as const;
