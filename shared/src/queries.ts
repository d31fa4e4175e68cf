import { lazyAjv, lazyValidator } from './validation.ts';

/**
 * The shared parts of the two read queries of the specification, as JSON Schema: the metric query
 * object (§2.3) and the records source object (§2.5). The gateway's canvas schema narrows `metric`
 * and `source` to the full lists and adds per-source rules; each subgraph narrows them to what it
 * answers. Written once, here.
 */

/** The `cursor` input of every list tool (CONTRACT §9 bounded lists). */
export const CURSOR_SCHEMA = { type: 'string', maxLength: 512, pattern: '^[A-Za-z0-9_-]{1,480}\\.[A-Za-z0-9_-]{22}$', description: 'next_cursor of the previous page, unchanged.' } as const;

/** A calendar date `YYYY-MM-DD`. */
export const DATE_SCHEMA = { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } as const;

/** Everything of a metric query but `metric` itself (specification §2.3; CONTRACT §8 limits). */
export const METRIC_QUERY_FIELDS = {
  days: { type: 'integer', minimum: 1, maximum: 366 },
  from: DATE_SCHEMA,
  to: DATE_SCHEMA,
  as_of: DATE_SCHEMA,
  compare: { enum: ['previous_period', 'previous_year'] },
  interval: { enum: ['day', 'week', 'month'] },
  horizon: { type: 'integer', minimum: 1, maximum: 24 },
  limit: { type: 'integer', minimum: 1, maximum: 100 },
  dimension_key: { type: 'string', minLength: 1, maxLength: 64 },
  target: { type: 'number' },
} as const;

/** `from` and `to` come together (specification §2.3). */
export const METRIC_QUERY_DEPENDENCIES = { from: ['to'], to: ['from'] } as const;

/** Everything of a records source object but `source` itself (specification §2.5). */
export const RECORDS_QUERY_FIELDS = {
  limit: { type: 'integer', minimum: 1, maximum: 100 },
  search: { type: 'string', minLength: 1, maxLength: 200 },
  kind: { type: 'string', minLength: 1, maxLength: 64 },
  status: { type: 'string', minLength: 1, maxLength: 64 },
  ref: { type: 'string', minLength: 1, maxLength: 200 },
  /** `next_cursor` of the previous page (CONTRACT §9 bounded lists). */
  cursor: CURSOR_SCHEMA,
} as const;

/** A records source object as a subgraph receives it (specification §2.5). */
export interface RecordsQuery { source: string; limit?: number; search?: string; kind?: string; status?: string; ref?: string; cursor?: string }

// Compiled at the first query a process answers, not at import (every service and the gateway import this module).
const ajv = lazyAjv();

/** Throws `invalid_input` with a JSON Pointer when a records source object does not have the shape of §2.5 (the subgraph checks the values). */
export const validateRecordsQuery: (query: unknown) => asserts query is RecordsQuery = lazyValidator(ajv, {
  type: 'object', additionalProperties: false, required: ['source'],
  properties: { source: { type: 'string', minLength: 1, maxLength: 64 }, ...RECORDS_QUERY_FIELDS },
}) as (query: unknown) => asserts query is RecordsQuery;

/** Throws `invalid_input` with a JSON Pointer when a metric query object does not have the shape of §2.3 (the subgraph checks the metric's name). */
export const validateMetricQuery: (query: unknown) => void = lazyValidator(ajv, {
  type: 'object', additionalProperties: false, required: ['metric'],
  properties: { metric: { type: 'string', minLength: 1, maxLength: 64 }, ...METRIC_QUERY_FIELDS },
  dependentRequired: METRIC_QUERY_DEPENDENCIES,
});
