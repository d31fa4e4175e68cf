import type { SourceReader } from '@cuadra/shared';
import { chartPage } from './model.ts';

/** records.list `accounts`: the chart in code order; no kind and no status (specification §2.5); search the code and name. */
export const accountsSource: SourceReader = async (q, ctx) => {
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  return chartPage(ctx.db, ctx.workspace, { search: q.search }, limit, q.cursor) as never;
};
