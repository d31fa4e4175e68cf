import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { moveFacts } from '../facts.ts';
import { DEAL_VIEW_SCHEMA, dealView } from '../model.ts';
import { changeDeal, firstStageOf, keyInColumn, stageNamed, transition } from '../ops.ts';

/** Loses an open deal, with a reason from its pipeline's list. */
export const lose = defineTool({
  name: 'deals.lose',
  description: 'Mark an open deal lost: `reason` is one of its pipeline\'s lost reasons (pipelines.get lists them), `note` says more; it moves to the pipeline\'s first lost stage (or the lost stage given). Policies see its amount (amount_over) and stage_kind lost.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'reason'],
    properties: { id: ID_SCHEMA, reason: { type: 'string', minLength: 1, maxLength: 80 }, note: { type: 'string', maxLength: 2000 }, stage_id: ID_SCHEMA },
  },
  output: recordOutput('deal', DEAL_VIEW_SCHEMA),
  facts: (input, ctx) => moveFacts(ctx, input.id, { stage_id: input.stage_id, kind: 'lost' }),
  async handler(input, ctx) {
    const deal = await changeDeal(ctx, input.id, async (d, { pipelines }) => {
      if (d.status !== 'open') throw new CuadraError('conflict', `Deal ${d._id} is already ${d.status}${d.status === 'won' ? '; reopen it first' : ''}.`);
      const pipeline = pipelines.pipelines.find((p) => p.id === d.pipeline_id)!;
      const stage = input.stage_id ? stageNamed(pipelines, input.stage_id, '/stage_id').stage : firstStageOf(pipeline, 'lost');
      if (stage.kind !== 'lost' || !pipeline.stages.some((s) => s.id === stage.id)) throw new CuadraError('invalid_input', `Stage ${stage.id} is not a lost stage of this deal's pipeline.`, { field: '/stage_id' });
      return transition(d, pipeline, stage, await keyInColumn(ctx, stage.id, d._id, undefined, '/place'), ctx.principal.actor.id, ctx.now, { reason: input.reason, note: input.note ?? null, field: '/reason' });
    });
    return { deal: dealView(deal) };
  },
});
