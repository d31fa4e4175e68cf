import { defineModule } from '@cuadra/shared';
import { pipelineSets } from './model.ts';
import { pipelinesSource, stagesSource } from './sources.ts';
import { addStage } from './tools/add_stage.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';
import { updateStage } from './tools/update_stage.ts';

/** Sales pipelines and their ordered stages (fractional order keys). */
export const pipelinesModule = defineModule({
  name: 'pipelines',
  tools: [create, update, addStage, updateStage, archive, get, list],
  models: [pipelineSets],
  reads: { sources: { crm_pipelines: pipelinesSource, crm_stages: stagesSource } },
});
