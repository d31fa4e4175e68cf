import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { DASHBOARD_VIEW_SCHEMA, dashboardView } from '../../canvas/store.ts';
import { canvasServices } from '../services.ts';

/** One dashboard, by id or key. */
export const get = defineTool({
  name: 'dashboards.get',
  description: 'Get one dashboard of the workspace (by id, or by its key) with its block tree.',
  risk: 'read',
  input: ID_INPUT,
  output: recordOutput('dashboard', DASHBOARD_VIEW_SCHEMA),
  async handler(input, ctx) {
    const doc = await canvasServices(ctx).dashboards.get(ctx.workspace, input.id);
    if (!doc) throw new CuadraError('not_found', `No dashboard ${input.id} exists in this workspace.`);
    return { dashboard: dashboardView(doc) };
  },
});
