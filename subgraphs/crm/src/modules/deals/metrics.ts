import { applyRate, buckets, calendarDays, changeBps, CuadraError, localDate, previousWindow, queryWindow, readByKeys, windowProblem, type MetricReader } from '@cuadra/shared';
import { pipelinesInOrder, readPipelines, stagesInOrder } from '../pipelines/model.ts';
import { COLUMNS, columnId, ROLLUPS, rollupId, type ColumnDoc, type RollupDoc } from './columns.ts';

const DAY_MS = 86_400_000;

/** Average of a sum over a count, in days with one decimal (null when nothing was counted). */
function days(ms: number, n: number): number | null {
  return n > 0 ? Math.round((ms / n / DAY_MS) * 10) / 10 : null;
}

/**
 * `crm_pipeline`: the sales pipeline now and what closed in the window. Rows: one per stage of
 * every active pipeline in board order (count, amount, weighted amount = amount × the stage's
 * probability, from the columns kept on write; average days deals spent in it before leaving
 * during the window), then a `totals` row per currency: open count, amount and weighted amount,
 * won and lost counts and amounts in the window, win rate (won ÷ closed, basis points) and average
 * days to close. The series and summary are the amount won per bucket and in the window (money, in
 * the default pipeline's currency), with `previous` and `change_bps` when the query compares.
 * Everything is read from counters by `_id` (CONTRACT §9): no deal is counted per read.
 */
export const crmPipelineMetric: MetricReader = async (q, ctx) => {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const set = await readPipelines(ctx.db, ctx.workspace);
  const pipelines = pipelinesInOrder(set);
  const currency = pipelines[0]?.currency ?? 'COP';
  const currencies = [...new Set([currency, ...pipelines.map((p) => p.currency)])];
  const today = localDate(ctx.now);
  const w = queryWindow(q, today);
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const dayIds = (win: { from: string; to: string }, cur: string) => calendarDays(win.from, win.to).map((d) => rollupId(ctx.workspace, cur, 'd', d));
  const wanted = [...new Set(currencies.flatMap((c) => [...dayIds(w, c), ...(pw ? dayIds(pw, c) : [])]))];
  const stages = pipelines.flatMap((p) => stagesInOrder(p).map((s) => ({ p, s })));
  const [rollups, columns] = await Promise.all([
    readByKeys<RollupDoc>(ctx.db, ROLLUPS, '_id', wanted),
    readByKeys<ColumnDoc>(ctx.db, COLUMNS, '_id', stages.map(({ s }) => columnId(ctx.workspace, s.id))),
  ]);
  const byId = new Map(rollups.map((r) => [r._id, r]));
  const colOf = new Map(columns.map((c) => [c._id, c]));
  const sumOver = (from: string, to: string, cur: string, read: (r: RollupDoc) => number) => calendarDays(from, to).reduce((acc, d) => {
    const r = byId.get(rollupId(ctx.workspace, cur, 'd', d));
    return acc + (r ? read(r) : 0);
  }, 0);
  const v = (key: string) => (r: RollupDoc) => r.v?.[key] ?? 0;

  const stageRows = stages.map(({ p, s }) => {
    const col = colOf.get(columnId(ctx.workspace, s.id));
    const amount = col?.amount ?? 0;
    const exits = sumOver(w.from, w.to, p.currency, (r) => r.x?.[s.id]?.n ?? 0);
    const ms = sumOver(w.from, w.to, p.currency, (r) => r.x?.[s.id]?.ms ?? 0);
    return {
      row: 'stage', pipeline: p.key, stage_id: s.id, stage: s.name, kind: s.kind, probability_ppm: s.probability_ppm, currency: p.currency,
      count: Math.max(col?.count ?? 0, 0), amount, weighted_amount: applyRate(amount, s.probability_ppm), exits, avg_days_in_stage: days(ms, exits),
    };
  });
  const totals = currencies.map((cur) => {
    const open = stageRows.filter((r) => r.currency === cur && r.kind === 'open');
    const wonN = sumOver(w.from, w.to, cur, v('won_n'));
    const lostN = sumOver(w.from, w.to, cur, v('lost_n'));
    const closed = sumOver(w.from, w.to, cur, v('closed_n'));
    return {
      row: 'totals', currency: cur,
      open_count: open.reduce((a, r) => a + r.count, 0), open_amount: open.reduce((a, r) => a + r.amount, 0), weighted_amount: open.reduce((a, r) => a + r.weighted_amount, 0),
      won_count: wonN, won_amount: sumOver(w.from, w.to, cur, v('won_amt')), lost_count: lostN, lost_amount: sumOver(w.from, w.to, cur, v('lost_amt')),
      win_rate_bps: wonN + lostN > 0 ? Math.round((wonN * 10_000) / (wonN + lostN)) : null,
      avg_days_to_close: days(sumOver(w.from, w.to, cur, v('close_ms')), closed),
    };
  });
  const wonAmt = (from: string, to: string) => sumOver(from, to, currency, v('won_amt'));
  const series = buckets(w, q.interval).map((b) => ({ ...b, value: wonAmt(b.period, b.period_end) }));
  const value = wonAmt(w.from, w.to);
  const summary: { value: number; previous?: number; change_bps?: number; target?: number } = { value };
  if (pw) {
    buckets(pw, q.interval).forEach((b, i) => {
      if (series[i]) (series[i] as { previous?: number }).previous = wonAmt(b.period, b.period_end);
    });
    summary.previous = wonAmt(pw.from, pw.to);
    const change = changeBps(value, summary.previous);
    if (change !== undefined) summary.change_bps = change;
  }
  if (q.target !== undefined) summary.target = q.target;
  return { metric: 'crm_pipeline', unit: 'money', currency, series, summary, rows: [...stageRows, ...totals] };
};
