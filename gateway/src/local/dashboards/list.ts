import { CURSOR_SCHEMA, defineTool, pageOutput, PAGING_NOTE } from '@cuadra/shared';
import { DASHBOARD_SUMMARY_SCHEMA } from '../../canvas/store.ts';
import { canvasServices } from '../services.ts';

/** The workspace's dashboards, most recently changed first, without their blocks. */
export const list = defineTool<{ limit?: number; cursor?: string }>({
  name: 'dashboards.list',
  description: 'List the dashboards of the workspace (id, key, title, version, dates), most recently changed first.' + PAGING_NOTE,
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA } },
  output: pageOutput(DASHBOARD_SUMMARY_SCHEMA),
  async handler(input, ctx) {
    return canvasServices(ctx).dashboards.list(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor },
      (d) => ({ id: d._id, key: d.key, title: d.title, version: d.version, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString() }));
  },
});
