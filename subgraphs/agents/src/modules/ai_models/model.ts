import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { EMBEDDED_MODEL_ID } from '../../lib/embedded.ts';

/**
 * Prices of a model in the model's currency, as integer minor units (cents) per million tokens
 * (CONTRACT §1: money is integer minor units). A call's cost is kept exactly, in millionths of a
 * minor unit (`tokens × price`), so the sums of many small calls lose nothing to rounding.
 */
export interface ModelPrices { input: number; output: number; cached: number }

/** The outcome of the last `ai_models.test`. */
export interface ModelTest { ok: boolean; at: Date; latency_ms: number; error: string | null }

/** An OpenAI-compatible model provider of a workspace, as stored. `_id` is `aim_…`. */
export interface AiModelDoc {
  _id: string;
  workspace: string;
  name: string;
  /** Lower-cased name: unique per workspace. */
  name_lc: string;
  provider: 'openai_compatible';
  /** The provider's base URL (`https://api.example.com/v1`): the `openai` client's `baseURL`. */
  base_url: string;
  /** The model as the provider names it (`gpt-4o-mini`). */
  model: string;
  /** The API key, sealed (AES-256-GCM, CUADRA_SEAL_KEY, bound to this record); null: none is sent. Never shown again. */
  api_key_sealed: string | null;
  /** The key's last 4 characters, so a person recognises which key is set. */
  api_key_hint: string | null;
  currency: string;
  prices: ModelPrices;
  /** Tokens the model reads at most (prompt and answer). */
  context_size: number;
  /** Largest answer asked of it per call. */
  max_output_tokens: number;
  /** Calls per minute this workspace makes to it at most (the runtime waits, it never exceeds). */
  requests_per_minute: number | null;
  status: 'active' | 'archived';
  last_test: ModelTest | null;
  created_at: Date;
  updated_at: Date;
}

const aiModelSchema = new Schema<AiModelDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    name_lc: { type: String, required: true },
    provider: { type: String, required: true },
    base_url: { type: String, required: true },
    model: { type: String, required: true },
    api_key_sealed: { type: String, default: null },
    api_key_hint: { type: String, default: null },
    currency: { type: String, required: true },
    prices: { type: Schema.Types.Mixed, required: true },
    context_size: { type: Number, required: true },
    max_output_tokens: { type: Number, required: true },
    requests_per_minute: { type: Number, default: null },
    status: { type: String, required: true },
    last_test: { type: Schema.Types.Mixed, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
aiModelSchema.index({ workspace: 1, name_lc: 1 }, { unique: true });
addPositions(aiModelSchema);

/** The ai_models collection. */
export function aiModels(db: Connection): Model<AiModelDoc> {
  return modelOn<AiModelDoc>(db, 'AiModel', aiModelSchema, 'ai_models');
}

/** What the API key is sealed to: this record of this workspace (a box moved elsewhere does not open). */
export function apiKeyContext(workspace: string, id: string): string {
  return `ai_models.api_key:${workspace}:${id}`;
}

const PRICE = { type: 'integer', minimum: 0, maximum: 100_000_000 } as const;

/** Prices as tools take and give them: minor units per million tokens. */
export const PRICES_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['input', 'output'],
  properties: { input: PRICE, output: PRICE, cached: PRICE },
} as const;

/** JSON Schema of {@link aiModelView}. */
export const AI_MODEL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'provider', 'base_url', 'model', 'api_key_set', 'api_key_hint', 'currency', 'prices', 'context_size', 'max_output_tokens', 'requests_per_minute', 'status', 'last_test', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, name: TEXT, provider: { enum: ['openai_compatible', 'embedded'] }, base_url: NULLABLE_TEXT, model: TEXT,
    /** Whether an API key is set; the key itself is never shown. */
    api_key_set: { type: 'boolean' },
    api_key_hint: NULLABLE_TEXT,
    currency: TEXT,
    prices: { type: 'object', additionalProperties: false, required: ['input', 'output', 'cached'], properties: { input: PRICE, output: PRICE, cached: PRICE } },
    context_size: { type: 'integer' }, max_output_tokens: { type: 'integer' }, requests_per_minute: { type: ['integer', 'null'] },
    status: { enum: ['active', 'archived'] },
    last_test: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['ok', 'at', 'latency_ms', 'error'],
        properties: { ok: { type: 'boolean' }, at: DATE_TIME, latency_ms: { type: 'integer' }, error: NULLABLE_TEXT },
      }],
    },
    created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** The public shape of a model: never its key. */
export function aiModelView(m: AiModelDoc) {
  return {
    id: m._id, name: m.name, provider: m.provider, base_url: m.base_url, model: m.model, api_key_set: m.api_key_sealed !== null, api_key_hint: m.api_key_hint,
    currency: m.currency, prices: { input: m.prices.input, output: m.prices.output, cached: m.prices.cached ?? m.prices.input },
    context_size: m.context_size, max_output_tokens: m.max_output_tokens, requests_per_minute: m.requests_per_minute, status: m.status,
    last_test: m.last_test ? { ok: m.last_test.ok, at: new Date(m.last_test.at).toISOString(), latency_ms: m.last_test.latency_ms, error: m.last_test.error } : null,
    created_at: m.created_at.toISOString(), updated_at: m.updated_at.toISOString(),
  };
}

/** The embedded model as a model view: always available, free, small. */
export function embeddedModelView(now: Date) {
  return {
    id: EMBEDDED_MODEL_ID, name: 'SmolLM2-135M-Instruct (embedded)', provider: 'embedded' as const, base_url: null, model: 'smollm2-135m-instruct', api_key_set: false, api_key_hint: null,
    currency: 'USD', prices: { input: 0, output: 0, cached: 0 }, context_size: 4096, max_output_tokens: 128, requests_per_minute: null, status: 'active' as const,
    last_test: null, created_at: new Date(0).toISOString(), updated_at: now.toISOString(),
  };
}

/** Search over name, model and base URL (ai_models.list and the records source). */
export function aiModelMatches(m: AiModelDoc, needle: string): boolean {
  return m.name_lc.includes(needle) || containsText(m.model, needle) || containsText(m.base_url, needle);
}
