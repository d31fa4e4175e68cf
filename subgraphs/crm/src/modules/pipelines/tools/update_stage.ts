import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changePipelines, checkStages, findStage, keyAt, PIPELINE_VIEW_SCHEMA, pipelineView, probabilityFor, stagesInOrder } from '../model.ts';

/**
 * Changes a stage: name, probability, rotting days, its place among the others (one new order
 * key for this stage only: no renumbering), or archives it. Deals keep the stage they are in; a
 * stage holding open deals is archived only once they are moved (the board would lose them).
 */
export const updateStage = defineTool({
  name: 'pipelines.update_stage',
  description: 'Change a stage: name, probability (ppm), rotting days, move it `before`/`after` another stage (only its own order key changes), or archive it (`status: archived`, once no open deal is in it; restore with `active`).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: {
      id: ID_SCHEMA,
      name: { type: 'string', minLength: 1, maxLength: 80 },
      probability_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000 },
      rotting_days: { type: ['integer', 'null'], minimum: 1, maximum: 3650 },
      place: { type: 'object', additionalProperties: false, minProperties: 1, maxProperties: 1, properties: { before: ID_SCHEMA, after: ID_SCHEMA } },
      status: { enum: ['active', 'archived'] },
    },
  },
  output: recordOutput('pipeline', PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    // Archiving needs the column's count (kept on write by the deals module): read before the change.
    const openHere = input.status === 'archived' ? await ctx.db.collection('crm_columns').findOne({ _id: `${ctx.workspace}|${input.id}` } as never) as { count?: number } | null : null;
    const { set, result } = await changePipelines(ctx.db, ctx.workspace, (set) => {
      const found = findStage(set, input.id);
      if (!found) throw new CuadraError('not_found', `No stage ${input.id} exists in this workspace.`);
      const { pipeline: p, stage } = found;
      if (input.name) stage.name = input.name.trim();
      if (input.probability_ppm !== undefined) {
        if (stage.kind !== 'open' && probabilityFor(stage.kind, input.probability_ppm) !== input.probability_ppm) {
          throw new CuadraError('invalid_input', `A ${stage.kind} stage's probability is ${stage.kind === 'won' ? '1000000 (100 %)' : '0'}.`, { field: '/probability_ppm' });
        }
        stage.probability_ppm = input.probability_ppm;
      }
      if (input.rotting_days !== undefined) {
        if (stage.kind !== 'open' && input.rotting_days !== null) throw new CuadraError('invalid_input', 'Only open stages rot: a closed deal is not waiting for anyone.', { field: '/rotting_days' });
        stage.rotting_days = input.rotting_days;
      }
      if (input.place) stage.order_key = keyAt(stagesInOrder(p).filter((s) => s.id !== stage.id), input.place, '/place');
      if (input.status === 'archived' && stage.status === 'active') {
        if ((openHere?.count ?? 0) > 0) throw new CuadraError('conflict', `Stage ${stage.name} still holds ${openHere!.count} deals; move them to another stage first.`);
        stage.status = 'archived';
      } else if (input.status === 'active') stage.status = 'active';
      checkStages(p.stages, '/status');
      p.updated_at = ctx.now;
      return p;
    });
    return { pipeline: pipelineView(result, set) };
  },
});
