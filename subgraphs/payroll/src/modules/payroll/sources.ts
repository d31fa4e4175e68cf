import { decodeCursor, encodeCursor, type SourceReader } from '@cuadra/shared';
import { parameterRows, parameterYear } from './model.ts';

/**
 * records.list `payroll_parameters`: one row per parameter step applying in the year `ref`
 * (default the current year) — the value in force on 1 January and every change during the
 * year — with its value, effective date, legal source and verification. `kind` a group of
 * parameters, `status` verified or unverified, `search` a substring of the key or the source.
 * The table is code, not a collection, so `total` is the filtered count and the cursor an offset.
 */
export const parametersSource: SourceReader = async (q, ctx) => {
  const year = parameterYear(q.ref, ctx.now, '/ref');
  const rows = parameterRows(year, q);
  const series = `payroll_parameters:${year}:${q.kind ?? ''}:${q.status ?? ''}:${q.search ?? ''}`;
  const start = q.cursor ? decodeCursor(series, ctx.workspace, q.cursor) : 0;
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  const page = rows.slice(start, start + limit);
  const next = start + limit < rows.length ? encodeCursor(series, ctx.workspace, start + limit) : undefined;
  return { rows: page, total: rows.length, ...(next ? { next_cursor: next } : {}) };
};
