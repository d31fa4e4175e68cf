import { CuadraError, defineTool, ID_SCHEMA, sealerFromEnv } from '@cuadra/shared';
import { EMBEDDED_MODEL_ID } from '../../../lib/embedded.ts';
import { clientFor, providerError, resolveModel, usageOf } from '../../../lib/llm.ts';
import { aiModels } from '../model.ts';

const sealer = sealerFromEnv();

/** Sends a model one short request and says whether it answered, how fast, and with how many tokens. */
export const test = defineTool({
  name: 'ai_models.test',
  description: 'Test an AI model: one short chat request ("Answer OK"), at most 8 tokens. Answers whether it answered, the time it took, the model it reports and the tokens counted; '
    + 'a failure is answered with the provider\'s status and message (ok false), not refused. Kept as the model\'s last test.',
  risk: 'external',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['ok', 'latency_ms', 'error'],
    properties: {
      ok: { type: 'boolean' }, latency_ms: { type: 'integer' }, error: { type: ['string', 'null'] }, model: { type: 'string' },
      usage: { type: 'object', additionalProperties: false, required: ['input_tokens', 'output_tokens', 'cached_tokens'], properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, cached_tokens: { type: 'integer' } } },
    },
  },
  async handler(input, ctx) {
    const model = await resolveModel(ctx.db, ctx.workspace, input.id, sealer);
    if (!model) throw new CuadraError('not_found', `No active model ${input.id} exists in this workspace.`);
    const started = Date.now();
    let answer: { ok: boolean; latency_ms: number; error: string | null; model?: string; usage?: ReturnType<typeof usageOf> };
    try {
      const client = await clientFor(model, 30_000);
      const res = await client.chat.completions.create({ model: model.model, messages: [{ role: 'user', content: 'Answer OK.' }], max_tokens: 8, temperature: 0 });
      answer = { ok: true, latency_ms: Date.now() - started, error: null, model: res.model, usage: usageOf(res.usage) };
    } catch (err) {
      answer = { ok: false, latency_ms: Date.now() - started, error: providerError(err) };
    }
    if (input.id !== EMBEDDED_MODEL_ID) {
      await aiModels(ctx.db).updateOne({ _id: input.id, workspace: ctx.workspace }, { $set: { last_test: { ok: answer.ok, at: ctx.now, latency_ms: answer.latency_ms, error: answer.error } } });
    }
    return answer;
  },
});
