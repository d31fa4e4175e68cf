import { CURSOR_SCHEMA, defineTool, pageOutput } from '@cuadra/shared';
import { DIMENSION_KEY, TAG_VIEW_SCHEMA, tagsPage } from '../model.ts';

/** Lists the workspace's tags. */
export const listTags = defineTool({
  name: 'dimensions.list_tags',
  description: 'List the tags of the workspace\'s dimensions in (dimension, key) order; filter by dimension, status (active, inactive) or search (key or name). Pages: pass next_cursor back as cursor.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: { dimension: DIMENSION_KEY, status: { enum: ['active', 'inactive'] }, search: { type: 'string', minLength: 1, maxLength: 100 }, limit: { type: 'integer', minimum: 1, maximum: 200 }, cursor: CURSOR_SCHEMA },
  },
  output: pageOutput(TAG_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { limit, cursor, ...f } = input;
    return tagsPage(ctx.db, ctx.workspace, f, limit ?? 100, cursor);
  },
});
