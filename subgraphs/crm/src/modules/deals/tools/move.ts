import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { moveFacts } from '../facts.ts';
import { DEAL_VIEW_SCHEMA, dealView } from '../model.ts';
import { changeDeal, keyInColumn, stageNamed, transition } from '../ops.ts';
import { PLACE } from './create.ts';

/**
 * Moves a deal's card: to another stage (kept in its history: from, to, when, who) and/or to a
 * place in the column. Concurrent moves of one card apply one after the other (conditional update
 * on the deal's version); a retry with the same Idempotency-Key replays the first answer.
 */
export const move = defineTool({
  name: 'deals.move',
  description: 'Move a deal to a stage (any stage of an active pipeline in its currency) and/or a place in the column (before/after another deal; default on top). Into a won stage it is won; into a lost stage it needs lost_reason; out of won/lost it is reopened. Every stage change is kept in its history. Policies see the deal amount (amount_over) and the stage kind (facts.stage_kind).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: {
      id: ID_SCHEMA, stage_id: ID_SCHEMA, place: PLACE,
      lost_reason: { type: 'string', minLength: 1, maxLength: 80 }, lost_note: { type: 'string', maxLength: 2000 },
    },
  },
  output: recordOutput('deal', DEAL_VIEW_SCHEMA),
  facts: (input, ctx) => moveFacts(ctx, input.id, { stage_id: input.stage_id }),
  async handler(input, ctx) {
    const deal = await changeDeal(ctx, input.id, async (d, { pipelines }) => {
      const { pipeline, stage } = stageNamed(pipelines, input.stage_id ?? d.stage_id, '/stage_id');
      if (pipeline.currency !== d.currency) throw new CuadraError('invalid_input', `The pipeline ${pipeline.name} is in ${pipeline.currency}; this deal is in ${d.currency}.`, { field: '/stage_id' });
      if (stage.id === d.stage_id && !input.place) return null; // already there: nothing moves, nothing is recorded
      const key = await keyInColumn(ctx, stage.id, d._id, input.place, '/place');
      const lost = input.lost_reason ? { reason: input.lost_reason, note: input.lost_note ?? null, field: '/lost_reason' } : stage.id === d.stage_id && d.status === 'lost' ? { reason: d.lost_reason!, note: d.lost_note, field: '/lost_reason' } : undefined;
      return transition(d, pipeline, stage, key, ctx.principal.actor.id, ctx.now, lost);
    });
    return { deal: dealView(deal) };
  },
});
