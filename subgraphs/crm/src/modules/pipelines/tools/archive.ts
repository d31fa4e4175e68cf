import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changePipelines, PIPELINE_VIEW_SCHEMA, pipelinesInOrder, pipelineView } from '../model.ts';

/** Archives a pipeline (or restores it). Its deals keep their stages; it leaves boards and pickers. */
export const archive = defineTool({
  name: 'pipelines.archive',
  description: 'Archive a pipeline so it leaves boards and pickers (its deals keep their stages and history), or restore it with `restore: true`. The last active pipeline cannot be archived.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, restore: { type: 'boolean' } } },
  output: recordOutput('pipeline', PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { set, result } = await changePipelines(ctx.db, ctx.workspace, (set) => {
      const p = set.pipelines.find((x) => x.id === input.id);
      if (!p) throw new CuadraError('not_found', `No pipeline ${input.id} exists in this workspace.`);
      const to = input.restore ? 'active' : 'archived';
      if (p.status === to) throw new CuadraError('conflict', `Pipeline ${p.name} is already ${to}.`);
      if (to === 'archived' && pipelinesInOrder(set).length === 1) throw new CuadraError('conflict', 'This is the workspace\'s only active pipeline; create another before archiving it.');
      p.status = to;
      p.updated_at = ctx.now;
      return p;
    });
    return { pipeline: pipelineView(result, set) };
  },
});
