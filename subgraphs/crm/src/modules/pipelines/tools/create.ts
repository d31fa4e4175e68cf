import { CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import {
  changePipelines, checkStages, DEFAULT_LOST_REASONS, keyBetween, keyFromName, MAX_PIPELINES, newStage, PIPELINE_VIEW_SCHEMA, pipelinesInOrder, pipelineView, STAGE_INPUT,
  type Pipeline, type Stage,
} from '../model.ts';

/** JSON Schema of a pipeline's key and lost reasons (create and update). */
export const PIPELINE_KEY = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,39}$', description: 'Short key the board and the sources name the pipeline by (lower case, digits, dashes).' } as const;
export const LOST_REASONS = { type: 'array', minItems: 1, maxItems: 30, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 80 }, description: 'The reasons deals.lose picks from.' } as const;

/** Creates a pipeline with its stages in the order given; the workspace's first pipeline is its default. */
export const create = defineTool({
  name: 'pipelines.create',
  description: 'Create a sales pipeline with its stages in order (name, kind open/won/lost, probability in ppm, rotting days), its currency and the reasons a deal may be lost. The first pipeline of the workspace is the default; `default: true` makes this one the default.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'stages'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 80 },
      key: PIPELINE_KEY,
      currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217; every deal of the pipeline is in it (default COP).' },
      stages: { type: 'array', minItems: 1, maxItems: 30, items: STAGE_INPUT },
      lost_reasons: LOST_REASONS,
      default: { type: 'boolean' },
    },
  },
  output: recordOutput('pipeline', PIPELINE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { set, result } = await changePipelines(ctx.db, ctx.workspace, (set) => {
      if (set.pipelines.length >= MAX_PIPELINES) throw new CuadraError('conflict', `A workspace has at most ${MAX_PIPELINES} pipelines; archive or reuse one.`);
      const key = input.key ?? uniqueKey(keyFromName(input.name), set.pipelines);
      if (set.pipelines.some((p) => p.key === key)) throw new CuadraError('invalid_input', `Another pipeline of this workspace has the key "${key}".`, { field: '/key' });
      const stages: Stage[] = [];
      for (const s of input.stages) stages.push(newStage(s, keyBetween(stages.at(-1)?.order_key, null)));
      checkStages(stages, '/stages');
      const ordered = pipelinesInOrder(set, true);
      const orderKey = input.default ? keyBetween(null, ordered[0]?.order_key) : keyBetween(ordered.at(-1)?.order_key, null);
      const pipeline: Pipeline = {
        id: newId('pip'), key, name: input.name.trim(), currency: input.currency ?? 'COP', order_key: orderKey, status: 'active',
        lost_reasons: input.lost_reasons ?? DEFAULT_LOST_REASONS, stages, created_at: ctx.now, updated_at: ctx.now,
      };
      set.pipelines.push(pipeline);
      return pipeline;
    });
    return { pipeline: pipelineView(result, set) };
  },
});

/** `base`, or `base-2`, `base-3`… the first no pipeline has. */
function uniqueKey(base: string, pipelines: readonly Pipeline[]): string {
  const taken = new Set(pipelines.map((p) => p.key));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base.slice(0, 36)}-${n}`)) return `${base.slice(0, 36)}-${n}`;
}
