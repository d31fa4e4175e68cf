import { defineTool } from '@cuadra/shared';
import { METRIC_ANSWER_SCHEMA, queryMetric } from '../../canvas/routes.ts';
import { metricsQueryInputSchema } from '../../canvas/schema.ts';
import { canvasServices } from '../services.ts';

/** The composite metric read: fans out to the module that owns the metric (CONTRACT.md §8). */
export const query = defineTool({
  name: 'metrics.query',
  description: 'Read one metric (specification §2.3; answered today: {metrics}) over a window: {metric, unit, currency?, series: [{period, period_end, value, previous?}], summary: {value, previous?, change_bps?, target?}, rows?}. A metric no module answers yet is refused with not_found.',
  risk: 'read',
  input: metricsQueryInputSchema,
  output: METRIC_ANSWER_SCHEMA,
  async handler(input, ctx) {
    const services = canvasServices(ctx);
    return queryMetric(services.graph, ctx.principal, input, async (workspace, key) => (await services.dashboards.saved.get(workspace, key))?.query ?? null);
  },
});
