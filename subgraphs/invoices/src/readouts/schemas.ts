import { compileValidator, createAjv, METRIC_QUERY_DEPENDENCIES, METRIC_QUERY_FIELDS, RECORDS_QUERY_FIELDS } from '@cuadra/shared';
import { RECEIVABLES_METRICS } from './receivables.ts';

const ajv = createAjv();

/** The metric query object of specification §2.3, as JSON Schema (only what receivables read is enforced beyond shape). */
export const metricQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['metric'],
  properties: {
    metric: { enum: [...RECEIVABLES_METRICS] },
    ...METRIC_QUERY_FIELDS,
  },
  dependentRequired: METRIC_QUERY_DEPENDENCIES,
} as const;

/** The records source object of specification §2.5. */
export const recordsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: {
    source: { type: 'string', minLength: 1, maxLength: 64 },
    ...RECORDS_QUERY_FIELDS,
  },
} as const;

/** Throws `invalid_input` with a JSON Pointer when a metric query does not fit. */
export const validateMetricQuery = compileValidator(ajv, metricQuerySchema);
/** Throws `invalid_input` with a JSON Pointer when a records query does not fit. */
export const validateRecordsQuery = compileValidator(ajv, recordsQuerySchema);
