import { CuadraError, decodeCursor, encodeCursor, type ListAnswer, type RecordsQuery, type SourceReader } from '@cuadra/shared';
import { findPipeline, pipelinesInOrder, readPipelines, stagesInOrder, type Pipeline } from './model.ts';

/**
 * One page of rows computed in order from a bounded set (a workspace's pipelines or stages, read
 * with one `_id` lookup): `cursor` is the position reached, under the same signed cursors as every list.
 */
export function pageOfRows(series: string, workspace: string, rows: readonly Record<string, unknown>[], q: RecordsQuery): ListAnswer<Record<string, unknown>> {
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  const start = q.cursor ? decodeCursor(series, workspace, q.cursor) - 1 : 0;
  const page = rows.slice(start, start + limit);
  return { rows: page, total: rows.length, ...(start + limit < rows.length ? { next_cursor: encodeCursor(series, workspace, start + limit + 1) } : {}) };
}

function pipelineRow(p: Pipeline, isDefault: boolean) {
  return { id: p.id, key: p.key, name: p.name, currency: p.currency, default: isDefault, stages: stagesInOrder(p).length, status: p.status };
}

/** records.list `crm_pipelines`: the pipelines in order, the default first; search the name or key. Status is ignored (specification §2.5): active ones. */
export const pipelinesSource: SourceReader = async (q, ctx) => {
  const set = await readPipelines(ctx.db, ctx.workspace);
  const text = q.search?.toLowerCase();
  const ordered = pipelinesInOrder(set);
  const rows = ordered.filter((p) => !text || p.name.toLowerCase().includes(text) || p.key.includes(text)).map((p) => pipelineRow(p, p.id === ordered[0]?.id));
  return pageOfRows('crm_pipelines', ctx.workspace, rows, q);
};

/** records.list `crm_stages`: the stages in board order, of one pipeline (`ref` = its key or id) or of every active one. */
export const stagesSource: SourceReader = async (q, ctx) => {
  const set = await readPipelines(ctx.db, ctx.workspace);
  let pipelines = pipelinesInOrder(set);
  if (q.ref) {
    const p = findPipeline(set, q.ref);
    if (!p) throw new CuadraError('invalid_input', `No pipeline "${q.ref}" exists in this workspace.`, { field: '/ref' });
    pipelines = [p];
  }
  const text = q.search?.toLowerCase();
  const rows = pipelines.flatMap((p) => stagesInOrder(p).map((s, index) => ({
    id: s.id, pipeline: p.key, pipeline_id: p.id, name: s.name, kind: s.kind, position: index + 1, probability_ppm: s.probability_ppm, rotting_days: s.rotting_days,
  }))).filter((r) => !text || r.name.toLowerCase().includes(text));
  return pageOfRows(`crm_stages:${q.ref ?? ''}`, ctx.workspace, rows, q);
};
