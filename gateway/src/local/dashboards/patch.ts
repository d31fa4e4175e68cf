import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { checkDashboardRules } from '../../canvas/rules.ts';
import { patchInputSchema, validatedBlocks, type Block } from '../../canvas/schema.ts';
import { DASHBOARD_VIEW_SCHEMA, dashboardView } from '../../canvas/store.ts';
import { canvasServices } from '../services.ts';

/** Replaces the fields it is given (CONTRACT.md §8). */
export const patch = defineTool({
  name: 'dashboards.patch',
  description: 'Change a dashboard: the fields given (title, blocks) replace the stored ones. Blocks are checked as in dashboards.save.',
  risk: 'write',
  maxInputBytes: 1024 * 1024,
  input: patchInputSchema,
  output: recordOutput('dashboard', DASHBOARD_VIEW_SCHEMA),
  async handler(input, ctx) {
    const services = canvasServices(ctx);
    const blocks = input.blocks && validatedBlocks(input.blocks);
    if (blocks) checkDashboardRules(blocks, (name) => services.catalog.get(name));
    const set: { title?: string; blocks?: Block[] } = {};
    if (input.title !== undefined) set.title = input.title;
    if (blocks !== undefined) set.blocks = blocks;
    const doc = await services.dashboards.patch(ctx.workspace, input.id, set, ctx.now);
    if (!doc) throw new CuadraError('not_found', `No dashboard ${input.id} exists in this workspace.`);
    return { dashboard: dashboardView(doc) };
  },
});
