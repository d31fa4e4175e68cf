import { CuadraError, decodeCursor, defineSource, encodeCursor, listNewestFirst, type SourceReader } from '@cuadra/shared';
import { NOVELTY_TYPES, noveltyMatches, novelties, noveltyView, type NoveltyDoc } from './novelties.ts';
import { payrollRuns, payslipView, RUN_FREQUENCIES, RUN_STATUSES, runView, type RunDoc } from './runs.ts';
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

/** records.list `payroll_runs`: newest first; kind monthly, first_half or second_half; status computed, approved, posted or void; search the month (YYYY-MM). */
export const payrollRunsSource = defineSource<RunDoc>({
  model: payrollRuns,
  search: (r, needle) => r.month.includes(needle) || r.period.from.includes(needle),
  kinds: Object.fromEntries(RUN_FREQUENCIES.map((f) => [f, { frequency: f }])),
  statuses: RUN_STATUSES,
  row: (r) => { const v = runView(r); return { id: v.id, frequency: v.frequency, month: v.month, period: v.period, status: v.status, currency: v.currency, totals: v.totals, created_at: v.created_at }; },
});

/** records.list `payroll_novelties`: newest recorded first; kind a novelty type; search the employee's name or the label. */
export const noveltiesSource = defineSource<NoveltyDoc>({
  model: novelties,
  search: noveltyMatches,
  kinds: Object.fromEntries(NOVELTY_TYPES.map((t) => [t, { type: t }])),
  row: noveltyView,
});

/**
 * records.list `payslips`: the payslips of the run `ref` (a run id; default the latest run that
 * is not void), one row per employee by name; `search` the employee's name or document number.
 * A run's payslips are one document, so `total` is the filtered count and the cursor an offset.
 */
export const payslipsSource: SourceReader = async (q, ctx) => {
  const model = payrollRuns(ctx.db);
  let run: RunDoc | null;
  if (q.ref !== undefined) {
    run = await model.findOne({ _id: String(q.ref), workspace: ctx.workspace }).lean();
    if (!run) throw new CuadraError('not_found', `No payroll run ${q.ref} exists in this workspace.`);
  } else {
    // The newest live run: positions grow with creation; a workspace has a couple of runs a month.
    const page = await listNewestFirst<RunDoc, RunDoc>(model, { workspace: ctx.workspace, limit: 1, match: (r) => r.status !== 'void' }, (r) => r);
    run = page.rows[0] ?? null;
  }
  if (!run) return { rows: [], total: 0 };
  const needle = q.search?.toLowerCase();
  const rows = run.payslips.filter((p) => !needle || p.name.toLowerCase().includes(needle) || p.document.number.includes(needle)).map((p) => payslipView(run, p));
  const series = `payslips:${run._id}:${needle ?? ''}`;
  const start = q.cursor ? decodeCursor(series, ctx.workspace, q.cursor) : 0;
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  const next = start + limit < rows.length ? encodeCursor(series, ctx.workspace, start + limit) : undefined;
  return { rows: rows.slice(start, start + limit), total: rows.length, ...(next ? { next_cursor: next } : {}) };
};
