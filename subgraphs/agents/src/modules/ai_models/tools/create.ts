import { createPositioned, CuadraError, defineTool, newId, recordOutput, sealerFromEnv } from '@cuadra/shared';
import { checkOutboundUrl } from '../../../lib/outbound.ts';
import { AI_MODEL_VIEW_SCHEMA, aiModels, aiModelView, apiKeyContext, PRICES_SCHEMA, type AiModelDoc } from '../model.ts';

const sealer = sealerFromEnv();

/** The fields create and update share (update makes each optional). */
export const MODEL_FIELDS = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
  base_url: { type: 'string', minLength: 8, maxLength: 500, description: 'The provider\'s OpenAI-compatible base URL, e.g. https://api.openai.com/v1.' },
  model: { type: 'string', minLength: 1, maxLength: 200, description: 'The model as the provider names it.' },
  /** Sealed at rest, never shown again (CONTRACT §10: a declared secret field). */
  api_key: { type: 'string', minLength: 1, maxLength: 1000, writeOnly: true, description: 'The provider\'s API key: sealed at rest, never shown again.' },
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  prices: { ...PRICES_SCHEMA, description: 'Price per million tokens in minor units (cents) of the currency: input, output and cached input (default: the input price).' },
  context_size: { type: 'integer', minimum: 512, maximum: 10_000_000 },
  max_output_tokens: { type: 'integer', minimum: 16, maximum: 1_000_000 },
  requests_per_minute: { type: 'integer', minimum: 1, maximum: 100_000 },
} as const;

/** The last 4 characters of a key, to recognise it by. */
export function keyHint(key: string): string {
  return key.length > 8 ? `…${key.slice(-4)}` : '…';
}

/** Seals a key to its model record; without a seal key it cannot be kept (`unavailable`, nothing stored). */
export function sealApiKey(key: string, workspace: string, id: string): string {
  if (!sealer) throw new CuadraError('unavailable', 'This deployment has no seal key (CUADRA_SEAL_KEY), so an API key cannot be kept; nothing was stored.');
  return sealer.seal(key, apiKeyContext(workspace, id));
}

/** Adds an OpenAI-compatible model provider to the workspace. */
export const create = defineTool({
  name: 'ai_models.create',
  description: 'Add an AI model the workspace\'s agents may run on: an OpenAI-compatible provider (base URL, API key — sealed, never shown again — and the model\'s name there), '
    + 'its prices per million input, output and cached tokens in minor units of a currency (default USD), its context size and the largest answer asked of it. '
    + 'The embedded model (id "embedded") is always there and needs no record.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'base_url', 'model', 'prices'],
    properties: MODEL_FIELDS,
  },
  output: recordOutput('ai_model', AI_MODEL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const name = input.name.trim();
    const id = newId('aim');
    const doc: AiModelDoc = {
      _id: id, workspace: ctx.workspace, name, name_lc: name.toLowerCase(), provider: 'openai_compatible',
      base_url: checkOutboundUrl(input.base_url, '/base_url'), model: input.model.trim(),
      api_key_sealed: input.api_key ? sealApiKey(input.api_key, ctx.workspace, id) : null, api_key_hint: input.api_key ? keyHint(input.api_key) : null,
      currency: input.currency ?? 'USD',
      prices: { input: input.prices.input, output: input.prices.output, cached: input.prices.cached ?? input.prices.input },
      context_size: input.context_size ?? 128_000, max_output_tokens: input.max_output_tokens ?? 4_096, requests_per_minute: input.requests_per_minute ?? null,
      status: 'active', last_test: null, created_at: ctx.now, updated_at: ctx.now,
    };
    if (doc.max_output_tokens >= doc.context_size) throw new CuadraError('invalid_input', 'The largest answer must be smaller than the context size.', { field: '/max_output_tokens' });
    try {
      await createPositioned(aiModels(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `A model named "${name}" already exists in this workspace.`);
      throw err;
    }
    return { ai_model: aiModelView(doc) };
  },
});
