import { defineModule } from '@cuadra/shared';
import { aiModels } from './model.ts';
import { aiModelsSource } from './sources.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { test } from './tools/test.ts';
import { update } from './tools/update.ts';

/** The AI models (OpenAI-compatible providers) a workspace's agents run on, keys sealed. */
export const aiModelsModule = defineModule({
  name: 'ai_models',
  tools: [create, update, get, list, test],
  models: [aiModels],
  listed: [{ model: aiModels }],
  reads: { sources: { ai_models: aiModelsSource } },
});
