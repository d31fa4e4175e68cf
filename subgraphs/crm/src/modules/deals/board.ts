import { applyRate, CuadraError, type ReadContext } from '@cuadra/shared';
import { findPipeline, readPipelines, stagesInOrder, type Pipeline, type Stage } from '../pipelines/model.ts';
import { readColumns } from './columns.ts';
import { deals, type DealDoc } from './model.ts';

/** What a kanban block asks (specification §2.2 `board`): a pipeline key (empty: the default) and cards per column. */
export interface BoardQuery { pipeline?: string; limit?: number }

const DAY_MS = 86_400_000;

/** Whether a deal sits idle in an open stage longer than the stage allows. */
export function isRotting(d: Pick<DealDoc, 'status' | 'stage_entered_at' | 'updated_at'>, stage: Stage, now: Date): boolean {
  if (d.status !== 'open' || stage.kind !== 'open' || !stage.rotting_days) return false;
  const touched = Math.max(new Date(d.stage_entered_at).getTime(), new Date(d.updated_at).getTime());
  return now.getTime() - touched > stage.rotting_days * DAY_MS;
}

function card(d: DealDoc, stage: Stage, now: Date) {
  return {
    id: d._id, title: d.title, party_id: d.party_id, party_name: d.party_name, amount: d.amount, currency: d.currency, owner_id: d.owner_id,
    expected_close: d.expected_close, tags: d.tags, status: d.status, rotting: isRotting(d, stage, now),
    days_in_stage: Math.floor((now.getTime() - new Date(d.stage_entered_at).getTime()) / DAY_MS),
  };
}

/**
 * The board of a pipeline (the kanban block's `board_data`): its active stages in order, each
 * with the first `limit` cards of its column (default 25, max 100), the column's total count,
 * amount and weighted amount (kept on write: never counted per read), and rotting flags. Its cost
 * follows stages × limit, whatever the number of deals.
 */
export async function readBoard(q: BoardQuery, ctx: ReadContext) {
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 25), 1), 100);
  const set = await readPipelines(ctx.db, ctx.workspace);
  const pipeline: Pipeline | undefined = findPipeline(set, q.pipeline);
  if (!pipeline) {
    throw q.pipeline ? new CuadraError('invalid_input', `No pipeline "${q.pipeline}" exists in this workspace.`, { field: '/pipeline' })
      : new CuadraError('not_found', 'This workspace has no pipeline yet: create one with pipelines.create.');
  }
  const stages = stagesInOrder(pipeline);
  const columns = await readColumns(ctx.db, ctx.workspace, stages.map((s) => s.id), limit);
  const ids = [...columns.values()].flatMap((c) => c.cards.map((x) => x.i));
  const found: DealDoc[] = ids.length ? await deals(ctx.db).find({ _id: { $in: ids } }).lean<DealDoc[]>() : [];
  const byId = new Map(found.filter((d) => d.workspace === ctx.workspace).map((d) => [d._id, d]));
  let count = 0;
  let amount = 0;
  let weighted = 0;
  const out = stages.map((s) => {
    const col = columns.get(s.id);
    const n = Math.max(col?.count ?? 0, 0);
    const sum = col?.amount ?? 0;
    const w = applyRate(sum, s.probability_ppm);
    count += n;
    amount += sum;
    weighted += w;
    const cards = (col?.cards ?? []).map((c) => byId.get(c.i)).filter((d): d is DealDoc => !!d && d.stage_id === s.id).map((d) => card(d, s, ctx.now));
    return {
      stage_id: s.id, name: s.name, kind: s.kind, probability_ppm: s.probability_ppm, rotting_days: s.rotting_days,
      count: n, amount: sum, weighted_amount: w, rotting: cards.filter((c) => c.rotting).length, more: n > cards.length, deals: cards,
    };
  });
  return {
    pipeline: { id: pipeline.id, key: pipeline.key, name: pipeline.name, currency: pipeline.currency },
    limit, columns: out, totals: { count, amount, weighted_amount: weighted },
  };
}
