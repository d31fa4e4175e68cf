import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changePipelines, checkStages, keyAt, newStage, PIPELINE_VIEW_SCHEMA, pipelineView, STAGE_INPUT, stagesInOrder } from '../model.ts';

/** Adds a stage to a pipeline, before or after another (default: last). */
export const addStage = defineTool({
  name: 'pipelines.add_stage',
  description: 'Add a stage to a pipeline: name, kind open/won/lost, probability in ppm, rotting days; placed `before` or `after` another stage (default last). Other stages keep their order keys.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['pipeline_id', 'stage'],
    properties: {
      pipeline_id: ID_SCHEMA, stage: STAGE_INPUT,
      place: { type: 'object', additionalProperties: false, maxProperties: 1, properties: { before: ID_SCHEMA, after: ID_SCHEMA } },
    },
  },
  output: recordOutput('pipeline', PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { set, result } = await changePipelines(ctx.db, ctx.workspace, (set) => {
      const p = set.pipelines.find((x) => x.id === input.pipeline_id);
      if (!p) throw new CuadraError('not_found', `No pipeline ${input.pipeline_id} exists in this workspace.`);
      if (p.status === 'archived') throw new CuadraError('conflict', `Pipeline ${p.name} is archived; restore it before changing it.`);
      const stage = newStage(input.stage, keyAt(stagesInOrder(p).map((s) => ({ id: s.id, order_key: s.order_key })), input.place ?? {}, '/place'));
      p.stages.push(stage);
      checkStages(p.stages, '/stage');
      p.updated_at = ctx.now;
      return p;
    });
    return { pipeline: pipelineView(result, set) };
  },
});
