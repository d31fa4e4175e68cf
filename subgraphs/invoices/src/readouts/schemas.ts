import { metricQueryValidator } from '@cuadra/shared';
import { RECEIVABLES_METRICS } from './receivables.ts';

/** Throws `invalid_input` with a JSON Pointer when a metric query (§2.3) is not one of the receivables metrics or does not fit. */
export const validateMetricQuery = metricQueryValidator(RECEIVABLES_METRICS);
/** The records source object's shape (§2.5), written once in the shared library. */
export { validateRecordsQuery } from '@cuadra/shared';
