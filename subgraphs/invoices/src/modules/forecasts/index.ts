import { wakingPayrollPull } from '../../accounting/payroll_pull.ts';
import { defineModule } from '@cuadra/shared';
import { FORECAST_METRICS } from './metrics.ts';

/**
 * The forecasts read from the ledger, the open documents and the recurring schedules (issue 17):
 * metrics only, no tools and no collection of their own.
 */
export const forecastsModule = defineModule({
  name: 'forecasts',
  tools: [],
  reads: { metrics: Object.fromEntries(Object.entries(FORECAST_METRICS).map(([name, reader]) => [name, wakingPayrollPull(reader)])) },
});
