import { CuadraError, defineTool, localDate } from '@cuadra/shared';
import { RENDERED_BLOCK_SCHEMA, renderBlocks } from '../../canvas/render.ts';
import { renderInputSchema, validatedBlocks } from '../../canvas/schema.ts';
import { readGatewaySource } from '../reads.ts';
import { canvasServices } from '../services.ts';

/** Fills every block's data through the composed graph, concurrently (CONTRACT.md §8). */
export const render = defineTool({
  name: 'dashboards.render',
  description: 'Render a dashboard (by id, or blocks given inline) with the viewer\'s values (params, selections): the same block tree with each block\'s data filled — stats cards, chart/table data (metrics.query), records (records.list), agenda, event, board, result. A block waiting for a required param or a selection gets waiting: true; a block whose data fails gets error {code, error} while the rest render.',
  risk: 'read',
  maxInputBytes: 1024 * 1024,
  input: renderInputSchema,
  output: {
    type: 'object', additionalProperties: false, required: ['blocks', 'rendered_at', 'render_ms'],
    properties: {
      dashboard: {
        type: 'object', additionalProperties: false, required: ['id', 'key', 'title', 'version'],
        properties: { id: { type: 'string' }, key: { type: ['string', 'null'] }, title: { type: 'string' }, version: { type: 'integer', minimum: 1 } },
      },
      blocks: { type: 'array', items: RENDERED_BLOCK_SCHEMA },
      rendered_at: { type: 'string', format: 'date-time' },
      render_ms: { type: 'integer', minimum: 0 },
    },
  },
  async handler(input, ctx) {
    const services = canvasServices(ctx);
    let blocks = input.blocks && validatedBlocks(input.blocks);
    let dashboard: Record<string, unknown> | undefined;
    if (input.id !== undefined) {
      const doc = await services.dashboards.get(ctx.workspace, input.id);
      if (!doc) throw new CuadraError('not_found', `No dashboard ${input.id} exists in this workspace.`);
      blocks = doc.blocks;
      dashboard = { id: doc._id, key: doc.key, title: doc.title, version: doc.version };
    }
    const started = performance.now();
    const rendered = await renderBlocks(blocks!, input.values ?? {}, {
      run: services.graph, readLocal: (principal, query) => readGatewaySource(services, principal, query), principal: ctx.principal, today: localDate(ctx.now), now: ctx.now,
      invokeRead: (tool, toolInput) => services.invokeRead(ctx.principal, tool, toolInput),
      saved: async (workspace, key) => (await services.dashboards.saved.get(workspace, key))?.query ?? null,
    });
    return { ...(dashboard ? { dashboard } : {}), blocks: rendered, rendered_at: ctx.now.toISOString(), render_ms: Math.round(performance.now() - started) };
  },
});
