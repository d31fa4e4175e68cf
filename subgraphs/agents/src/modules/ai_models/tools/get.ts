import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { EMBEDDED_MODEL_ID } from '../../../lib/embedded.ts';
import { AI_MODEL_VIEW_SCHEMA, aiModels, aiModelView, embeddedModelView } from '../model.ts';

/** One model of the workspace (or the embedded one), never its key. */
export const get = defineTool({
  name: 'ai_models.get',
  description: 'Get one AI model by id ("embedded" is the built-in SmolLM2-135M-Instruct): provider, model name, prices, limits, whether a key is set (never the key), the last test.',
  risk: 'read',
  input: ID_INPUT,
  output: recordOutput('ai_model', AI_MODEL_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (input.id === EMBEDDED_MODEL_ID) return { ai_model: embeddedModelView(ctx.now) };
    const doc = await aiModels(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No model ${input.id} exists in this workspace.`);
    return { ai_model: aiModelView(doc) };
  },
});
