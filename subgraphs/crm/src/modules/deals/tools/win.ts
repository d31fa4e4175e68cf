import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { moveFacts } from '../facts.ts';
import { DEAL_VIEW_SCHEMA, dealView } from '../model.ts';
import { changeDeal, firstStageOf, keyInColumn, stageNamed, transition } from '../ops.ts';

/** Wins an open deal: it goes to its pipeline's won stage (or the won stage given). */
export const win = defineTool({
  name: 'deals.win',
  description: 'Mark an open deal won: it moves to its pipeline\'s first won stage (or the won stage given), on top of that column, and counts as won today. Policies see its amount (amount_over) and stage_kind won.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, stage_id: ID_SCHEMA } },
  output: recordOutput('deal', DEAL_VIEW_SCHEMA),
  facts: (input, ctx) => moveFacts(ctx, input.id, { stage_id: input.stage_id, kind: 'won' }),
  async handler(input, ctx) {
    const deal = await changeDeal(ctx, input.id, async (d, { pipelines }) => {
      if (d.status !== 'open') throw new CuadraError('conflict', `Deal ${d._id} is already ${d.status}${d.status === 'lost' ? '; reopen it first' : ''}.`);
      const pipeline = pipelines.pipelines.find((p) => p.id === d.pipeline_id)!;
      const stage = input.stage_id ? stageNamed(pipelines, input.stage_id, '/stage_id').stage : firstStageOf(pipeline, 'won');
      if (stage.kind !== 'won' || !pipeline.stages.some((s) => s.id === stage.id)) throw new CuadraError('invalid_input', `Stage ${stage.id} is not a won stage of this deal's pipeline.`, { field: '/stage_id' });
      return transition(d, pipeline, stage, await keyInColumn(ctx, stage.id, d._id, undefined, '/place'), ctx.principal.actor.id, ctx.now);
    });
    return { deal: dealView(deal) };
  },
});
