import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { checkOutboundUrl } from '../../../lib/outbound.ts';
import { AI_MODEL_VIEW_SCHEMA, aiModels, aiModelView, type AiModelDoc } from '../model.ts';
import { keyHint, MODEL_FIELDS, sealApiKey } from './create.ts';

/** Changes a model of the workspace: any of its fields, its key (or none: null), or archives it. */
export const update = defineTool({
  name: 'ai_models.update',
  description: 'Change a model of the workspace: name, base URL, provider model name, API key (sealed; null removes it), currency, prices, context size, '
    + 'largest answer, requests per minute, or status (archived: agents on it stop taking runs).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: {
      id: ID_SCHEMA,
      ...MODEL_FIELDS,
      api_key: { anyOf: [MODEL_FIELDS.api_key, { type: 'null' }], writeOnly: true },
      status: { enum: ['active', 'archived'] },
    },
  },
  output: recordOutput('ai_model', AI_MODEL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set: Partial<AiModelDoc> = { updated_at: ctx.now };
    if (input.name !== undefined) {
      set.name = input.name.trim();
      set.name_lc = set.name.toLowerCase();
    }
    if (input.base_url !== undefined) set.base_url = checkOutboundUrl(input.base_url, '/base_url');
    if (input.model !== undefined) set.model = input.model.trim();
    if (input.api_key === null) {
      set.api_key_sealed = null;
      set.api_key_hint = null;
    } else if (input.api_key !== undefined) {
      set.api_key_sealed = sealApiKey(input.api_key, ctx.workspace, input.id);
      set.api_key_hint = keyHint(input.api_key);
    }
    if (input.currency !== undefined) set.currency = input.currency;
    if (input.prices !== undefined) set.prices = { input: input.prices.input, output: input.prices.output, cached: input.prices.cached ?? input.prices.input };
    if (input.context_size !== undefined) set.context_size = input.context_size;
    if (input.max_output_tokens !== undefined) set.max_output_tokens = input.max_output_tokens;
    if (input.requests_per_minute !== undefined) set.requests_per_minute = input.requests_per_minute;
    if (input.status !== undefined) set.status = input.status;
    const before = await aiModels(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!before) throw new CuadraError('not_found', `No model ${input.id} exists in this workspace.`);
    if ((set.max_output_tokens ?? before.max_output_tokens) >= (set.context_size ?? before.context_size)) {
      throw new CuadraError('invalid_input', 'The largest answer must be smaller than the context size.', { field: input.max_output_tokens !== undefined ? '/max_output_tokens' : '/context_size' });
    }
    let after;
    try {
      after = await aiModels(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace }, { $set: set }, { returnDocument: 'after' }).lean();
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `A model named "${set.name}" already exists in this workspace.`);
      throw err;
    }
    if (!after) throw new CuadraError('not_found', `No model ${input.id} exists in this workspace.`);
    return { ai_model: aiModelView(after) };
  },
});
