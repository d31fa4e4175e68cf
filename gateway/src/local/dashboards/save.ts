import { defineTool } from '@cuadra/shared';
import { checkDashboardRules } from '../../canvas/rules.ts';
import { saveInputSchema, validatedBlocks } from '../../canvas/schema.ts';
import { DASHBOARD_VIEW_SCHEMA, dashboardView } from '../../canvas/store.ts';
import { canvasServices } from '../services.ts';

/** Saves a dashboard; a save with the key of an existing one replaces it. */
export const save = defineTool({
  name: 'dashboards.save',
  description: 'Save a dashboard of canvas blocks (specification §2.2–2.9): title, optional key, and the block tree. A save naming the key of an existing dashboard replaces it. Every block is checked against the canvas schema; a refusal names the offending field as a JSON Pointer (/blocks/0/children/2/span).',
  risk: 'write',
  maxInputBytes: 1024 * 1024,
  input: saveInputSchema,
  output: {
    type: 'object', additionalProperties: false, required: ['dashboard', 'created'],
    properties: { dashboard: DASHBOARD_VIEW_SCHEMA, created: { type: 'boolean', description: 'false when the save replaced the dashboard with this key.' } },
  },
  async handler(input, ctx) {
    const services = canvasServices(ctx);
    const blocks = validatedBlocks(input.blocks);
    checkDashboardRules(blocks, (name) => services.catalog.get(name));
    const { doc, created } = await services.dashboards.save(ctx.workspace, { ...input, blocks }, ctx.now);
    return { dashboard: dashboardView(doc), created };
  },
});
