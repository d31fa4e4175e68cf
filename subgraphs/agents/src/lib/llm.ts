import { CuadraError, type Sealer } from '@cuadra/shared';
import OpenAI from 'openai';
import type { Connection } from 'mongoose';
import { aiModels, apiKeyContext, type ModelPrices } from '../modules/ai_models/model.ts';
import { EMBEDDED_MODEL_ID, embeddedModel } from './embedded.ts';
import { outboundFetch } from './outbound.ts';

/** A model ready to be called: where, as what, at what price. The API key is opened only here, never stored open or logged. */
export interface ResolvedModel {
  id: string;
  name: string;
  provider: 'openai_compatible' | 'embedded';
  /** The provider's name of the model (the request's `model`). */
  model: string;
  baseURL(): Promise<string>;
  apiKey: string | null;
  currency: string;
  prices: ModelPrices;
  contextSize: number;
  maxOutputTokens: number;
  /** Calls per minute this workspace makes to it at most; null: no limit of ours. */
  requestsPerMinute: number | null;
}

/** The embedded model: free, 4,096 tokens of context, answers of at most 128 tokens (about 10 s on two cores). */
export const EMBEDDED: Omit<ResolvedModel, 'baseURL'> = {
  id: EMBEDDED_MODEL_ID, name: 'SmolLM2-135M-Instruct (embedded)', provider: 'embedded', model: 'smollm2-135m-instruct', apiKey: null,
  currency: 'USD', prices: { input: 0, output: 0, cached: 0 }, contextSize: 4096, maxOutputTokens: 128, requestsPerMinute: null,
};

/** The model `id` of the workspace (or the embedded one), or null when there is none active. */
export async function resolveModel(db: Connection, workspace: string, id: string, sealer: Sealer | null): Promise<ResolvedModel | null> {
  if (id === EMBEDDED_MODEL_ID) return { ...EMBEDDED, baseURL: () => embeddedModel.url() };
  const doc = await aiModels(db).findOne({ _id: id, workspace, status: 'active' }).lean();
  if (!doc) return null;
  let apiKey: string | null = null;
  if (doc.api_key_sealed) {
    apiKey = sealer?.open(doc.api_key_sealed, apiKeyContext(workspace, doc._id)) ?? null;
    if (apiKey === null) throw new CuadraError('unavailable', `The API key of the model "${doc.name}" cannot be opened here (no seal key, or another one); set it again with ai_models.update.`, { beforeAnyEffect: true });
  }
  return {
    id: doc._id, name: doc.name, provider: 'openai_compatible', model: doc.model, baseURL: async () => doc.base_url, apiKey, currency: doc.currency,
    prices: { input: doc.prices.input, output: doc.prices.output, cached: doc.prices.cached ?? doc.prices.input }, contextSize: doc.context_size, maxOutputTokens: doc.max_output_tokens,
    requestsPerMinute: doc.requests_per_minute ?? null,
  };
}

/** The `openai` client for a model: its base URL, its key, no retries of its own (the runtime decides), a bounded wait. */
export async function clientFor(model: ResolvedModel, timeoutMs = 120_000): Promise<OpenAI> {
  return new OpenAI({
    baseURL: await model.baseURL(), apiKey: model.apiKey ?? 'none', maxRetries: 0, timeout: timeoutMs,
    fetch: outboundFetch(model.provider === 'embedded'),
  });
}

/** Token counts of one model call. */
export interface CallUsage { input_tokens: number; output_tokens: number; cached_tokens: number }

/**
 * A call's cost in millionths of the currency's minor unit: tokens × price per million tokens,
 * exactly (cached input at its own price, the rest of the input at the input price).
 */
export function costMicros(usage: CallUsage, prices: ModelPrices): number {
  const cached = Math.min(usage.cached_tokens, usage.input_tokens);
  return (usage.input_tokens - cached) * prices.input + cached * prices.cached + usage.output_tokens * prices.output;
}

/** The usage an OpenAI-compatible answer reports (missing counts are 0). */
export function usageOf(usage: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | undefined | null): CallUsage {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.trunc(v) : 0);
  return { input_tokens: n(usage?.prompt_tokens), output_tokens: n(usage?.completion_tokens), cached_tokens: n(usage?.prompt_tokens_details?.cached_tokens) };
}

/** A provider's failure as a sentence for the run record: its status and message, never a stack or a header. */
export function providerError(err: unknown): string {
  if (err instanceof OpenAI.APIError) return `The model provider answered ${err.status ?? 'no status'}: ${String(err.message).slice(0, 300)}`;
  if (err instanceof CuadraError) return err.message;
  return `The model provider could not be reached: ${String((err as Error)?.message ?? err).slice(0, 200)}`;
}

/** Statuses a provider answers when it is busy or failing for a while, not because of the request: asked again later. */
const TRANSIENT_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

/**
 * When to ask a provider again after this failure, in ms; null when asking again would not help
 * (the request itself was refused: 400, 401, 403, 404, 422…). A busy provider's `Retry-After`
 * (seconds) is followed up to a minute; otherwise 2 s. A connection that failed is transient; a
 * timeout is not (the run's time decides then).
 */
export function retryAfterMs(err: unknown): number | null {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return null;
  if (err instanceof OpenAI.APIConnectionError) return 2_000;
  if (!(err instanceof OpenAI.APIError) || err.status === undefined || !TRANSIENT_STATUSES.has(err.status)) return null;
  const seconds = Number(err.headers?.get?.('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(60_000, Math.ceil(seconds * 1000)) : 2_000;
}
