import { defineTool } from '@cuadra/shared';
import { SAVED_KEY_SCHEMA, SAVED_METRIC_VIEW_SCHEMA, savedMetricView } from '../../canvas/saved.ts';
import { metricQuerySchema, type MetricQuery } from '../../canvas/schema.ts';
import { canvasServices } from '../services.ts';

/** Saves a metric query under a key: blocks then name it `saved:<key>`. */
export const save = defineTool({
  name: 'metrics.save',
  description: 'Save a metric query (specification §2.3: metric, window, interval, compare, limit, dimension_key, target…) under a key, so dashboard blocks and metrics.query can name it "saved:<key>"; saving a key again replaces its query. A block\'s own fields (inputs such as from/to or days, interval, limit) are laid over the saved query when it is read. At most 200 per workspace.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['key', 'query'], properties: { key: SAVED_KEY_SCHEMA, query: metricQuerySchema } },
  output: {
    type: 'object', additionalProperties: false, required: ['saved_metric', 'created'],
    properties: { saved_metric: SAVED_METRIC_VIEW_SCHEMA, created: { type: 'boolean' } },
  },
  async handler(input, ctx) {
    const { doc, created } = await canvasServices(ctx).dashboards.saved.save(ctx.workspace, input.key, input.query as MetricQuery, ctx.now);
    return { saved_metric: savedMetricView(doc), created };
  },
});
