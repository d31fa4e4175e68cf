import { CURSOR_SCHEMA, defineTool, pageOutput } from '@cuadra/shared';
import { DIMENSION_VIEW_SCHEMA, dimensionsPage } from '../model.ts';

/** Lists the workspace's dimensions. */
export const list = defineTool({
  name: 'dimensions.list',
  description: 'List the workspace\'s analytic dimensions (cost_center and those it added) in key order, with status; filter by status or search (key or name). Pages: pass next_cursor back as cursor.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: { status: { enum: ['active', 'inactive'] }, search: { type: 'string', minLength: 1, maxLength: 100 }, limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA },
  },
  output: pageOutput(DIMENSION_VIEW_SCHEMA),
  async handler(input, ctx) {
    return dimensionsPage(ctx.db, ctx.workspace, { status: input.status, search: input.search }, input.limit ?? 50, input.cursor);
  },
});
