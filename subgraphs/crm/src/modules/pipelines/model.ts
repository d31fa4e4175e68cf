import { CuadraError, DATE_TIME_SCHEMA, modelOn, newId, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { generateKeyBetween } from 'fractional-indexing';
import { Schema, type Connection, type Model } from 'mongoose';
import { changeSet, readSet } from '../../lib/workspace-set.ts';

/** A stage of a pipeline: a column of the board. */
export interface Stage {
  id: string;
  name: string;
  /** `open` stages hold deals being worked; a deal in a `won` or `lost` stage is closed. */
  kind: 'open' | 'won' | 'lost';
  /** Chance a deal here closes won, in parts per million (won 1,000,000; lost 0): weights the forecast. */
  probability_ppm: number;
  /** Days a deal may sit in this stage untouched before it is flagged rotting; null: never. */
  rotting_days: number | null;
  /** Fractional order key (fractional-indexing): stages sort by it; a reorder changes one key, never renumbers. */
  order_key: string;
  status: 'active' | 'archived';
}

/** A sales pipeline: its ordered stages, its currency and the reasons a deal may be lost. */
export interface Pipeline {
  id: string;
  /** Short key the sources' `ref` and the board's `pipeline` name it by (unique in the workspace). */
  key: string;
  name: string;
  /** Every deal of a pipeline is in its currency, so columns and forecasts add up exactly. */
  currency: string;
  /** Pipelines sort by it; the first active one is the default (an empty board key means it). */
  order_key: string;
  status: 'active' | 'archived';
  /** The configurable list deals.lose picks its reason from. */
  lost_reasons: string[];
  stages: Stage[];
  created_at: Date;
  updated_at: Date;
}

/**
 * A workspace's pipelines, all in one document (`_id` = workspace): they are few (at most
 * {@link MAX_PIPELINES}, each with at most {@link MAX_STAGES} stages), read together by every board
 * and deal write, and changed rarely — so one `_id` read gives all of them, and every change (a new
 * stage, a reorder, a new default) is one conditional update on `version`, atomic without transactions.
 */
export interface PipelineSetDoc {
  _id: string;
  workspace: string;
  /** Bumped by every change: the condition of the next one. */
  version: number;
  pipelines: Pipeline[];
}

export const MAX_PIPELINES = 50;
export const MAX_STAGES = 30;

/** Lost reasons a new pipeline starts with (es-CO first users; editable). */
export const DEFAULT_LOST_REASONS = ['Precio', 'Eligió a la competencia', 'Sin presupuesto', 'Sin respuesta', 'Momento no adecuado', 'Otro'];

const schema = new Schema<PipelineSetDoc>(
  { _id: { type: String, required: true }, workspace: { type: String, required: true }, version: { type: Number, required: true }, pipelines: { type: Schema.Types.Mixed, default: [] } },
  { versionKey: false, minimize: false },
);

/** The pipelines collection (one document per workspace). */
export function pipelineSets(db: Connection): Model<PipelineSetDoc> {
  return modelOn<PipelineSetDoc>(db, 'CrmPipelineSet', schema, 'crm_pipelines');
}

/** The workspace's pipelines (an empty set when it has none yet). */
export function readPipelines(db: Connection, workspace: string): Promise<PipelineSetDoc> {
  return readSet(pipelineSets(db), workspace, () => ({ _id: workspace, workspace, version: 0, pipelines: [] }));
}

/** Changes a workspace's pipelines by one conditional write on the set's version ({@link changeSet}). */
export function changePipelines<T>(db: Connection, workspace: string, change: (set: PipelineSetDoc) => T): Promise<{ set: PipelineSetDoc; result: T }> {
  return changeSet(pipelineSets(db), workspace, () => ({ _id: workspace, workspace, version: 0, pipelines: [] }), ['pipelines'], 'pipelines', change);
}

/** Active stages of a pipeline, in board order. */
export function stagesInOrder(p: Pipeline, withArchived = false): Stage[] {
  return p.stages.filter((s) => withArchived || s.status === 'active').sort((a, b) => (a.order_key < b.order_key ? -1 : a.order_key > b.order_key ? 1 : 0));
}

/** Pipelines in order (active only unless asked); the first active one is the default. */
export function pipelinesInOrder(set: Pick<PipelineSetDoc, 'pipelines'>, withArchived = false): Pipeline[] {
  return set.pipelines.filter((p) => withArchived || p.status === 'active').sort((a, b) => (a.order_key < b.order_key ? -1 : a.order_key > b.order_key ? 1 : 0));
}

/** The pipeline a key or id names; an empty reference is the default (the first active one). */
export function findPipeline(set: Pick<PipelineSetDoc, 'pipelines'>, ref: string | undefined | null): Pipeline | undefined {
  if (!ref) return pipelinesInOrder(set)[0];
  return set.pipelines.find((p) => p.key === ref || p.id === ref);
}

/** The stage with this id, with its pipeline. */
export function findStage(set: Pick<PipelineSetDoc, 'pipelines'>, stageId: string): { pipeline: Pipeline; stage: Stage } | undefined {
  for (const pipeline of set.pipelines) {
    const stage = pipeline.stages.find((s) => s.id === stageId);
    if (stage) return { pipeline, stage };
  }
  return undefined;
}

/** An order key between two neighbours (either may be absent: the ends). */
export function keyBetween(before: string | null | undefined, after: string | null | undefined): string {
  return generateKeyBetween(before ?? null, after ?? null);
}

/**
 * The order key that places an element of `ordered` right before `beforeId` or right after
 * `afterId` (neither: last). `field` is where a refusal points when the neighbour is not there.
 */
export function keyAt(ordered: readonly { id: string; order_key: string }[], place: { before?: string; after?: string }, field: string): string {
  const others = ordered;
  if (place.before) {
    const i = others.findIndex((o) => o.id === place.before);
    if (i < 0) throw new CuadraError('invalid_input', `${place.before} is not there to place it before.`, { field: `${field}/before` });
    return keyBetween(others[i - 1]?.order_key, others[i].order_key);
  }
  if (place.after) {
    const i = others.findIndex((o) => o.id === place.after);
    if (i < 0) throw new CuadraError('invalid_input', `${place.after} is not there to place it after.`, { field: `${field}/after` });
    return keyBetween(others[i].order_key, others[i + 1]?.order_key);
  }
  return keyBetween(others.at(-1)?.order_key, null);
}

/** The probability a stage of this kind has: won 100 %, lost 0 %, open as given (default 0). */
export function probabilityFor(kind: Stage['kind'], given: number | undefined): number {
  return kind === 'won' ? 1_000_000 : kind === 'lost' ? 0 : (given ?? 0);
}

/** A new stage from its input. */
export function newStage(input: { name: string; kind: Stage['kind']; probability_ppm?: number; rotting_days?: number | null }, orderKey: string): Stage {
  return {
    id: newId('stg'), name: input.name.trim(), kind: input.kind, probability_ppm: probabilityFor(input.kind, input.probability_ppm),
    rotting_days: input.kind === 'open' ? (input.rotting_days ?? null) : null, order_key: orderKey, status: 'active',
  };
}

/** JSON Schema of a stage's input. */
export const STAGE_INPUT = {
  type: 'object', additionalProperties: false, required: ['name', 'kind'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 80 },
    kind: { enum: ['open', 'won', 'lost'] },
    probability_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'Chance of winning from this stage in parts per million (250000 = 25 %); won stages are 1000000 and lost ones 0.' },
    rotting_days: { type: ['integer', 'null'], minimum: 1, maximum: 3650, description: 'Days a deal may stay here untouched before it is flagged rotting (open stages only).' },
  },
} as const;

/** JSON Schema of a stage as tools answer it. */
export const STAGE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'name', 'kind', 'probability_ppm', 'rotting_days', 'sort_key', 'status'],
  properties: {
    id: TEXT, name: TEXT, kind: { enum: ['open', 'won', 'lost'] }, probability_ppm: { type: 'integer' }, rotting_days: { type: ['integer', 'null'] },
    sort_key: { type: 'string', description: 'Its fractional order key: stages sort by it.' }, status: { enum: ['active', 'archived'] },
  },
} as const;

/** JSON Schema of a pipeline as tools answer it. */
export const PIPELINE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'key', 'name', 'currency', 'default', 'status', 'lost_reasons', 'stages', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, key: TEXT, name: TEXT, currency: TEXT, default: { type: 'boolean' }, status: { enum: ['active', 'archived'] },
    lost_reasons: { type: 'array', items: TEXT }, stages: { type: 'array', items: STAGE_VIEW_SCHEMA }, created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of a pipeline: its stages in order (archived ones last), and whether it is the default. */
export function pipelineView(p: Pipeline, set: Pick<PipelineSetDoc, 'pipelines'>) {
  return {
    id: p.id, key: p.key, name: p.name, currency: p.currency, default: findPipeline(set, '')?.id === p.id, status: p.status, lost_reasons: p.lost_reasons,
    stages: [...stagesInOrder(p), ...p.stages.filter((s) => s.status === 'archived')].map(({ order_key, ...s }) => ({ ...s, sort_key: order_key })),
    created_at: new Date(p.created_at).toISOString(), updated_at: new Date(p.updated_at).toISOString(),
  };
}

/** A key from a name: lower case ASCII letters, digits and dashes. */
export function keyFromName(name: string): string {
  const key = name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return key || 'pipeline';
}

/** `invalid_input` at `field` unless the pipeline keeps at least one open stage and at most {@link MAX_STAGES} active ones. */
export function checkStages(stages: readonly Stage[], field: string): void {
  const active = stages.filter((s) => s.status === 'active');
  if (active.length > MAX_STAGES) throw new CuadraError('invalid_input', `A pipeline has at most ${MAX_STAGES} stages.`, { field });
  if (!active.some((s) => s.kind === 'open')) throw new CuadraError('invalid_input', 'A pipeline needs at least one open stage for deals being worked.', { field });
}
