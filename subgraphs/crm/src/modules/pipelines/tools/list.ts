import { defineTool, pageOutput } from '@cuadra/shared';
import { PIPELINE_VIEW_SCHEMA, pipelinesInOrder, pipelineView, readPipelines } from '../model.ts';

/** The workspace's pipelines in board order, the default first (at most 50: one page). */
export const list = defineTool({
  name: 'pipelines.list',
  description: 'List the workspace\'s pipelines in order, the default first, each with its stages in order; `status: archived` lists archived ones. A workspace has at most 50 pipelines, so this is always one page.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: { status: { enum: ['active', 'archived'] } } },
  output: pageOutput(PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set = await readPipelines(ctx.db, ctx.workspace);
    const rows = pipelinesInOrder(set, true).filter((p) => p.status === (input.status ?? 'active'));
    return { rows: rows.map((p) => pipelineView(p, set)), total: rows.length };
  },
});
