import type { SourceReader } from '@cuadra/shared';
import { CuadraError } from '@cuadra/shared';
import { dimensionsPage, tagsPage } from './model.ts';

const limitOf = (n: number | undefined) => Math.min(Math.max(Math.trunc(n ?? 8), 1), 100);

function statusOf(status: string | undefined): string | undefined {
  if (status !== undefined && status !== 'active' && status !== 'inactive') throw new CuadraError('invalid_input', `"${status}" is not a status of tags (active, inactive).`, { field: '/status' });
  return status;
}

/**
 * records.list `tags` (specification §2.5): in (dimension, key) order; `ref` = a dimension key
 * (default all); `status` active or inactive; `search` the key and name; no kind.
 */
export const tagsSource: SourceReader = async (q, ctx) => {
  if (q.kind) throw new CuadraError('invalid_input', 'The tags source has no kinds.', { field: '/kind' });
  return tagsPage(ctx.db, ctx.workspace, { dimension: q.ref, status: statusOf(q.status), search: q.search }, limitOf(q.limit), q.cursor) as never;
};

/** records.list `tag_dimensions`: in key order; status ignored (specification §2.5); `search` the key and name; no kind. */
export const tagDimensionsSource: SourceReader = async (q, ctx) => {
  if (q.kind) throw new CuadraError('invalid_input', 'The tag_dimensions source has no kinds.', { field: '/kind' });
  return dimensionsPage(ctx.db, ctx.workspace, { search: q.search }, limitOf(q.limit), q.cursor) as never;
};
