import { changeBps, countSeriesOfDays, localDate, type MetricReader } from '@cuadra/shared';
import { metricSpan, withTarget } from '../../lib/window.ts';

/**
 * metrics.query `activity` (unit count), from the shared governance store: ledger entries per
 * bucket of the window; summary = the window's total (and the comparison window's); rows = the
 * most used tools in the window (`limit`, default 5), each with how many of its calls agents'
 * runs made (`by_agent_runs`: entries carrying a run id). Read from the per-day counters the
 * ledger keeps as it grows (`Ledger.activity`: the days asked plus the entries not counted yet),
 * so it costs the window's days, not the ledger's size (issue 33).
 */
export const activityMetric: MetricReader = async (q, { governance, workspace, now }) => {
  const { today, window: w, from } = metricSpan(q, now);
  const { perDay, tools: perDayTools } = await governance.ledger.activity(workspace, localDate(new Date(from)), w.to);
  const r = countSeriesOfDays(perDay, q, today);
  const tools = new Map<string, { count: number; by_runs: number }>();
  for (const [day, perTool] of perDayTools) {
    if (day < w.from || day > w.to) continue;
    for (const [tool, c] of perTool) {
      const t = tools.get(tool) ?? { count: 0, by_runs: 0 };
      t.count += c.count;
      t.by_runs += c.by_runs;
      tools.set(tool, t);
    }
  }
  const rows = [...tools].map(([tool, c]) => ({ tool, count: c.count, by_agent_runs: c.by_runs }))
    .sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool))
    .slice(0, q.limit ?? 5);
  let summary: { value: number; previous?: number; change_bps?: number } = { value: r.value };
  if (r.previous !== undefined) {
    const change = changeBps(r.value, r.previous);
    summary = change === undefined ? { value: r.value, previous: r.previous } : { value: r.value, previous: r.previous, change_bps: change };
  }
  return { metric: q.metric, unit: 'count' as const, series: r.series, summary: withTarget(q, summary), rows };
};
