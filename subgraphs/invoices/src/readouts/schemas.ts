import { compileValidator, createAjv } from '@cuadra/shared';
import { RECEIVABLES_METRICS } from './receivables.ts';

const ajv = createAjv();

/** The metric query object of specification §2.3, as JSON Schema (only what receivables read is enforced beyond shape). */
export const metricQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['metric'],
  properties: {
    metric: { enum: [...RECEIVABLES_METRICS] },
    days: { type: 'integer', minimum: 1, maximum: 366 },
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    as_of: { type: 'string', format: 'date' },
    compare: { enum: ['previous_period', 'previous_year'] },
    interval: { enum: ['day', 'week', 'month'] },
    horizon: { type: 'integer', minimum: 1, maximum: 24 },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    dimension_key: { type: 'string', minLength: 1, maxLength: 64 },
    target: { type: 'number' },
  },
  dependentRequired: { from: ['to'], to: ['from'] },
} as const;

/** The records source object of specification §2.5. */
export const recordsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: {
    source: { type: 'string', minLength: 1, maxLength: 64 },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    search: { type: 'string', minLength: 1, maxLength: 200 },
    kind: { type: 'string', minLength: 1, maxLength: 64 },
    status: { type: 'string', minLength: 1, maxLength: 64 },
    ref: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

/** Throws `invalid_input` with a JSON Pointer when a metric query does not fit. */
export const validateMetricQuery = compileValidator(ajv, metricQuerySchema);
/** Throws `invalid_input` with a JSON Pointer when a records query does not fit. */
export const validateRecordsQuery = compileValidator(ajv, recordsQuerySchema);
