import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { findPipeline, PIPELINE_VIEW_SCHEMA, pipelineView, readPipelines } from '../model.ts';

/** One pipeline by id or key (empty: the default). */
export const get = defineTool({
  name: 'pipelines.get',
  description: 'Get one pipeline by id or key (an empty `id` is the default pipeline), with its stages in order.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { ...ID_SCHEMA, minLength: 0 } } },
  output: recordOutput('pipeline', PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set = await readPipelines(ctx.db, ctx.workspace);
    const p = findPipeline(set, input.id);
    if (!p) throw new CuadraError('not_found', input.id ? `No pipeline ${input.id} exists in this workspace.` : 'This workspace has no pipeline yet (pipelines.create makes one).');
    return { pipeline: pipelineView(p, set) };
  },
});
