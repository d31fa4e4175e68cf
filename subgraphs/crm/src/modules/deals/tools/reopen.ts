import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { moveFacts } from '../facts.ts';
import { DEAL_VIEW_SCHEMA, dealView } from '../model.ts';
import { changeDeal, firstStageOf, keyInColumn, stageNamed, transition } from '../ops.ts';

/** Reopens a won or lost deal, back in the open stage it closed from (or the one given). */
export const reopen = defineTool({
  name: 'deals.reopen',
  description: 'Reopen a won or lost deal: it goes back to the open stage it closed from (or the open stage given) and no longer counts as won or lost.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, stage_id: ID_SCHEMA } },
  output: recordOutput('deal', DEAL_VIEW_SCHEMA),
  facts: (input, ctx) => moveFacts(ctx, input.id, { stage_id: input.stage_id, kind: 'open' }),
  async handler(input, ctx) {
    const deal = await changeDeal(ctx, input.id, async (d, { pipelines }) => {
      if (d.status === 'open') throw new CuadraError('conflict', `Deal ${d._id} is open already.`);
      const pipeline = pipelines.pipelines.find((p) => p.id === d.pipeline_id)!;
      const previous = [...d.history].reverse().find((h) => h.to === d.stage_id)?.from;
      const back = previous ? pipeline.stages.find((s) => s.id === previous && s.kind === 'open' && s.status === 'active') : undefined;
      const stage = input.stage_id ? stageNamed(pipelines, input.stage_id, '/stage_id').stage : back ?? firstStageOf(pipeline, 'open');
      if (stage.kind !== 'open' || !pipeline.stages.some((s) => s.id === stage.id)) throw new CuadraError('invalid_input', `Stage ${stage.id} is not an open stage of this deal's pipeline.`, { field: '/stage_id' });
      return transition(d, pipeline, stage, await keyInColumn(ctx, stage.id, d._id, undefined, '/place'), ctx.principal.actor.id, ctx.now);
    });
    return { deal: dealView(deal) };
  },
});
