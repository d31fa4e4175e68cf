import { defineTool, pageOutput } from '@cuadra/shared';
import { SAVED_METRIC_VIEW_SCHEMA } from '../../canvas/saved.ts';
import { PAGE_INPUT } from '../page.ts';
import { canvasServices } from '../services.ts';

/** The workspace's saved metrics, in key order. */
export const list = defineTool({
  name: 'metrics.list',
  description: 'List the workspace\'s saved metrics (key, the name "saved:<key>" blocks use, and the saved query), in key order. Pages: pass next_cursor back as cursor until it is absent.',
  risk: 'read',
  input: PAGE_INPUT,
  output: pageOutput(SAVED_METRIC_VIEW_SCHEMA),
  async handler(input, ctx) {
    return canvasServices(ctx).dashboards.saved.list(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor });
  },
});
