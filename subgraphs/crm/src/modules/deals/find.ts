import { decodeCursor, encodeCursor, listNewestFirst, type ListAnswer, type Positioned } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { readFields } from '../crm_fields/model.ts';
import { findPipeline, readPipelines } from '../pipelines/model.ts';
import { deals, type DealDoc } from './model.ts';
import { dealText } from './ops.ts';
import { candidates, normaliseText } from './search.ts';

/** What deals.list and the crm_deals source filter on. */
export interface DealFilter {
  status?: string;
  /** A pipeline's key or id. */
  pipeline?: string;
  stage_id?: string;
  party_id?: string;
  search?: string;
  limit: number;
  cursor?: string;
}

/** Most ids one search reads (a term listed under more narrows by a longer word). */
const MAX_CANDIDATES = 5_000;

/**
 * One page of deals newest first. A search term with a word of 3+ characters reads the search
 * index (the posting list of its longest word's prefix) and then those deals by `_id`; other
 * filters page through the positions (CONTRACT §9) testing each deal. Answers `null` for a
 * pipeline reference that names none.
 */
export async function findDeals<R>(ctx: { db: Connection; workspace: string }, f: DealFilter, view: (d: DealDoc) => R): Promise<ListAnswer<R> | null> {
  let pipelineId: string | undefined;
  if (f.pipeline) {
    const p = findPipeline(await readPipelines(ctx.db, ctx.workspace), f.pipeline);
    if (!p) return null;
    pipelineId = p.id;
  }
  const fields = f.search ? await readFields(ctx.db, ctx.workspace) : null;
  const term = f.search ? normaliseText(f.search) : '';
  const matches = (d: DealDoc) => (!f.status || d.status === f.status) && (!pipelineId || d.pipeline_id === pipelineId) && (!f.stage_id || d.stage_id === f.stage_id)
    && (!f.party_id || d.party_id === f.party_id) && (!term || normaliseText(dealText(d, fields!)).includes(term));
  const ids = f.search ? await candidates(ctx.db, ctx.workspace, 'deal', f.search) : null;
  if (ids) {
    const series = 'crm_deals:search';
    const below = f.cursor ? decodeCursor(series, ctx.workspace, f.cursor) : Infinity;
    const found: (DealDoc & Positioned)[] = [];
    const wanted = ids.slice(0, MAX_CANDIDATES);
    for (let i = 0; i < wanted.length; i += 400) {
      const docs = await deals(ctx.db).find({ _id: { $in: wanted.slice(i, i + 400) } }).lean<(DealDoc & Positioned)[]>();
      found.push(...docs.filter((d) => d.workspace === ctx.workspace && matches(d)));
    }
    const ordered = found.sort((a, b) => b.pos - a.pos);
    const page = ordered.filter((d) => d.pos < below).slice(0, f.limit);
    const last = page.at(-1);
    const more = last && ordered.some((d) => d.pos < last.pos);
    return { rows: page.map(view), total: ordered.length, ...(more ? { next_cursor: encodeCursor(series, ctx.workspace, last.pos) } : {}) };
  }
  const any = f.status || pipelineId || f.stage_id || f.party_id || term;
  return listNewestFirst<DealDoc, R>(deals(ctx.db), { workspace: ctx.workspace, cursor: f.cursor, limit: f.limit, match: any ? matches : undefined }, view);
}
