import { buckets, CuadraError, localDate, previousWindow, queryWindow, windowProblem, type MetricQuery, type MetricReader } from '@cuadra/shared';
import { ledgerBetween, type LedgerSums } from '../../books/general-ledger.ts';
import { wholeChart } from '../../accounting/chart.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { summaryOf, type MetricAnswer } from '../../books/rollup-reads.ts';
import { incomeStatement } from '../accounts/statements.ts';
import { findDimension, tags } from './model.ts';

/** One row of profitability: a tag's income, costs and expenses, and their difference. */
export interface ProfitRow { kind: 'tag' | 'other' | 'untagged'; tag: string | null; name: string; income: number; costs: number; value: number; previous?: number }

/**
 * Per tag of `dimension`, from the ledger counters kept on write (journal.ts: `pi<dim>~<tag>` =
 * income, `pe<dim>~<tag>` = costs and expenses of the lines tagged so), and the untagged rest:
 * the window's income statement totals less every tag's, so the rows add up to the total.
 */
export function profitRows(sums: LedgerSums, dimension: string, chartTotals: { income: number; cost: number; expense: number }): ProfitRow[] {
  const byTag = new Map<string, { income: number; costs: number }>();
  const prefix = [`pi${dimension}~`, `pe${dimension}~`];
  for (const [k, v] of Object.entries(sums)) {
    const which = k.startsWith(prefix[0]) ? 'income' : k.startsWith(prefix[1]) ? 'costs' : null;
    if (!which) continue;
    const tag = k.slice(prefix[0].length);
    const acc = byTag.get(tag) ?? { income: 0, costs: 0 };
    acc[which] += v;
    byTag.set(tag, acc);
  }
  const rows: ProfitRow[] = [...byTag.entries()].filter(([, t]) => t.income !== 0 || t.costs !== 0)
    .map(([tag, t]) => ({ kind: 'tag' as const, tag, name: tag, income: t.income, costs: t.costs, value: t.income - t.costs }));
  const income = chartTotals.income - rows.reduce((s, r) => s + r.income, 0);
  const costs = chartTotals.cost + chartTotals.expense - rows.reduce((s, r) => s + r.costs, 0);
  rows.push({ kind: 'untagged', tag: null, name: 'Sin etiqueta', income, costs, value: income - costs });
  return rows;
}

/**
 * The `profitability` metric (specification §2.3): income minus costs and expenses per tag of
 * `dimension_key` (default cost_center) over the window, the `limit` (default 5, max 100) best
 * tags by result, the rest of the tags in one `other` row, and the untagged lines as their own
 * row — so the rows always add up to `summary.value`, the window's result. `series` is the
 * result per `interval`; `compare` fills `previous` on the summary and on each row.
 */
export const profitability: MetricReader = async (q: MetricQuery, ctx) => {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const dimension = q.dimension_key ?? 'cost_center';
  const dim = await findDimension(ctx.db, ctx.workspace, dimension);
  if (!dim) throw new CuadraError('invalid_input', `There is no dimension "${dimension}" in this workspace.`, { field: '/dimension_key' });
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 5), 1), 100);
  const currency = await workspaceCurrency(ctx.db, ctx.workspace, ctx);
  const chart = new Map((await wholeChart(ctx.db, ctx.workspace)).map((a) => [a.code, a]));
  const w = queryWindow(q, localDate(ctx.now));
  const bs = buckets(w, q.interval ?? 'day');
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const pbs = pw ? buckets(pw, q.interval ?? 'day') : [];
  const ranges = [w, ...bs.map((b) => ({ from: b.period, to: b.period_end })), ...(pw ? [pw, ...pbs.map((b) => ({ from: b.period, to: b.period_end }))] : [])];
  const sums = await ledgerBetween(ctx.db, ctx.workspace, currency, ranges);
  const totalsOf = (s: LedgerSums) => incomeStatement(s, chart);
  const now = totalsOf(sums[0]);
  const all = profitRows(sums[0], dimension, now);
  const series: MetricAnswer['series'] = bs.map((b, i) => ({ ...b, value: totalsOf(sums[1 + i]).result }));
  let prevTotal: number | undefined;
  if (pw) {
    const prev = totalsOf(sums[1 + bs.length]);
    prevTotal = prev.result;
    const prevRows = new Map(profitRows(sums[1 + bs.length], dimension, prev).map((r) => [r.tag, r.value]));
    for (const r of all) r.previous = prevRows.get(r.tag) ?? 0;
    series.forEach((p, i) => { if (pbs[i]) p.previous = totalsOf(sums[2 + bs.length + i]).result; });
  }
  const tagged = all.filter((r) => r.kind === 'tag').sort((a, b) => b.value - a.value || (a.tag! < b.tag! ? -1 : 1));
  const untagged = all.find((r) => r.kind === 'untagged')!;
  const shown = tagged.slice(0, limit);
  const names = new Map((await tags(ctx.db).find({ workspace: ctx.workspace, dimension, key: { $in: shown.map((r) => r.tag) } }).lean()).map((t) => [t.key, t.name]));
  for (const r of shown) r.name = names.get(r.tag!) ?? r.tag!;
  const rest = tagged.slice(limit);
  const rows: ProfitRow[] = [...shown];
  if (rest.length) {
    const other: ProfitRow = { kind: 'other', tag: null, name: `Otras ${rest.length} etiquetas`, income: 0, costs: 0, value: 0, ...(pw ? { previous: 0 } : {}) };
    for (const r of rest) {
      other.income += r.income;
      other.costs += r.costs;
      other.value += r.value;
      if (pw) other.previous! += r.previous ?? 0;
    }
    rows.push(other);
  }
  rows.push(untagged);
  const answer: MetricAnswer = {
    metric: 'profitability', unit: 'money', currency, series, summary: summaryOf(now.result, prevTotal, q),
    rows: rows.map((r) => ({ dimension, ...r })),
  };
  return answer as unknown as Record<string, unknown>;
};
