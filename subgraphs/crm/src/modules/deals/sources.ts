import { CuadraError, readByKeys, type SourceReader } from '@cuadra/shared';
import { COLUMNS, columnId, type ColumnDoc } from './columns.ts';
import { readPipelines } from '../pipelines/model.ts';
import { findDeals } from './find.ts';
import type { DealDoc } from './model.ts';

/** records.list `crm_deals`: status open/won/lost, `ref` = pipeline key (default all), search title, party, tags and custom text. */
export const dealsSource: SourceReader = async (q, ctx) => {
  if (q.status && !['open', 'won', 'lost'].includes(q.status)) throw new CuadraError('invalid_input', `"${q.status}" is not a status of crm_deals (open, won, lost).`, { field: '/status' });
  if (q.kind) throw new CuadraError('invalid_input', 'crm_deals has no kinds; filter by status or ref (the pipeline).', { field: '/kind' });
  const set = await readPipelines(ctx.db, ctx.workspace);
  const stageName = new Map(set.pipelines.flatMap((p) => p.stages.map((s) => [s.id, { stage: s.name, pipeline: p.key }] as const)));
  const row = (d: DealDoc) => ({
    id: d._id, title: d.title, party_id: d.party_id, party_name: d.party_name, amount: d.amount, currency: d.currency, status: d.status,
    pipeline: stageName.get(d.stage_id)?.pipeline ?? null, stage_id: d.stage_id, stage: stageName.get(d.stage_id)?.stage ?? null,
    owner_id: d.owner_id, expected_close: d.expected_close, lost_reason: d.lost_reason, tags: d.tags, custom: d.custom ?? {},
  });
  const page = await findDeals(ctx, { status: q.status, pipeline: q.ref, search: q.search, limit: Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100), cursor: q.cursor }, row);
  if (!page) throw new CuadraError('invalid_input', `No pipeline "${q.ref}" exists in this workspace.`, { field: '/ref' });
  // Status and pipeline are columns: their total is the columns' counts, kept on write (a deal's status is its stage's kind).
  if (!q.search && (q.status || q.ref)) {
    const stages = set.pipelines.filter((p) => !q.ref || p.key === q.ref || p.id === q.ref).flatMap((p) => p.stages).filter((s) => !q.status || s.kind === q.status);
    const columns = await readByKeys<ColumnDoc>(ctx.db, COLUMNS, '_id', stages.map((s) => columnId(ctx.workspace, s.id)));
    page.total = columns.reduce((n, c) => n + Math.max(c.count ?? 0, 0), 0);
  }
  return page;
};
