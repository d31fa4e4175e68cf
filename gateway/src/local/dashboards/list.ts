import { defineTool } from '@cuadra/shared';
import { DASHBOARD_SUMMARY_SCHEMA } from '../../canvas/store.ts';
import { canvasServices } from '../services.ts';

/** The workspace's dashboards, most recently changed first, without their blocks. */
export const list = defineTool<{ limit?: number }>({
  name: 'dashboards.list',
  description: 'List the dashboards of the workspace (id, key, title, version, dates), most recently changed first.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } } },
  output: { type: 'object', additionalProperties: false, required: ['rows'], properties: { rows: { type: 'array', maxItems: 100, items: DASHBOARD_SUMMARY_SCHEMA } } },
  async handler(input, ctx) {
    const docs = await canvasServices(ctx).dashboards.list(ctx.workspace, input.limit ?? 100);
    return { rows: docs.map((d) => ({ id: d._id, key: d.key, title: d.title, version: d.version, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString() })) };
  },
});
