import { defineTool, pageOutput, PAGING_NOTE } from '@cuadra/shared';
import { DASHBOARD_SUMMARY_SCHEMA } from '../../canvas/store.ts';
import { canvasServices } from '../services.ts';
import { PAGE_INPUT } from '../page.ts';

/** The workspace's dashboards, most recently changed first, without their blocks. */
export const list = defineTool({
  name: 'dashboards.list',
  description: 'List the dashboards of the workspace (id, key, title, version, dates), most recently changed first.' + PAGING_NOTE,
  risk: 'read',
  input: PAGE_INPUT,
  output: pageOutput(DASHBOARD_SUMMARY_SCHEMA),
  async handler(input, ctx) {
    return canvasServices(ctx).dashboards.list(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor },
      (d) => ({ id: d._id, key: d.key, title: d.title, version: d.version, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString() }));
  },
});
