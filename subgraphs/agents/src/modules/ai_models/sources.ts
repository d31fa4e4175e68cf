import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { aiModelMatches, aiModels, type AiModelDoc } from './model.ts';

function aiModelRow(m: AiModelDoc) {
  return {
    id: m._id, name: m.name, model: m.model, base_url: m.base_url, currency: m.currency, input_price: m.prices.input, output_price: m.prices.output,
    context_size: m.context_size, status: m.status, last_test_ok: m.last_test?.ok ?? null, created_at: m.created_at.toISOString(),
  };
}

const page = defineSource<AiModelDoc>({ model: aiModels, search: aiModelMatches, statuses: ['active', 'archived'], row: aiModelRow });

/** records.list `ai_models`: newest first, by cursor; search name, model, base URL; status active or archived; never a key. */
export const aiModelsSource: SourceReader = (q, ctx) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source ai_models takes no kind.', { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'The source ai_models takes no ref.', { field: '/ref' });
  return page(q, ctx);
};
