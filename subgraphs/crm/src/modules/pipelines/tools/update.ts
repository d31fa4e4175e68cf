import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changePipelines, keyBetween, PIPELINE_VIEW_SCHEMA, pipelinesInOrder, pipelineView } from '../model.ts';
import { LOST_REASONS, PIPELINE_KEY } from './create.ts';

/** Renames a pipeline, changes its key or lost reasons, or makes it the default (moves it first). */
export const update = defineTool({
  name: 'pipelines.update',
  description: 'Change a pipeline: name, key, the list of lost reasons, or `default: true` to make it the default (first) pipeline. Stages are changed with pipelines.add_stage and pipelines.update_stage.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: { id: ID_SCHEMA, name: { type: 'string', minLength: 1, maxLength: 80 }, key: PIPELINE_KEY, lost_reasons: LOST_REASONS, default: { const: true } },
  },
  output: recordOutput('pipeline', PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { set, result } = await changePipelines(ctx.db, ctx.workspace, (set) => {
      const p = set.pipelines.find((x) => x.id === input.id);
      if (!p) throw new CuadraError('not_found', `No pipeline ${input.id} exists in this workspace.`);
      if (p.status === 'archived') throw new CuadraError('conflict', `Pipeline ${p.name} is archived; restore it before changing it.`);
      if (input.key && set.pipelines.some((o) => o.key === input.key && o.id !== p.id)) throw new CuadraError('invalid_input', `Another pipeline of this workspace has the key "${input.key}".`, { field: '/key' });
      if (input.name) p.name = input.name.trim();
      if (input.key) p.key = input.key;
      if (input.lost_reasons) p.lost_reasons = input.lost_reasons;
      if (input.default) {
        const first = pipelinesInOrder(set, true).find((o) => o.id !== p.id);
        if (first && first.order_key < p.order_key) p.order_key = keyBetween(null, first.order_key);
      }
      p.updated_at = ctx.now;
      return p;
    });
    return { pipeline: pipelineView(result, set) };
  },
});
