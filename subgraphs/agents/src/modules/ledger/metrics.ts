import { changeBps, countSeries, localDate, type MetricReader } from '@cuadra/shared';
import { metricSpan, withTarget } from '../../lib/window.ts';

/**
 * metrics.query `activity` (unit count), from the shared governance store: ledger entries per
 * bucket of the window; summary = the window's total (and the comparison window's); rows = the
 * most used tools in the window (`limit`, default 5), each with how many of its calls agents'
 * runs made (`by_agent_runs`: entries carrying a run id). The ledger is read by `Ledger.span`, which
 * walks seq windows back from the head and stops at 50 000 entries read: a busier workspace is
 * counted over its newest 50 000 entries.
 */
export const activityMetric: MetricReader = async (q, { governance, workspace, now }) => {
  const { today, window: w, from, to } = metricSpan(q, now);
  const { entries } = await governance.ledger.span(workspace, from, to);
  const days = entries.map((e) => localDate(new Date(e.at)));
  const r = countSeries(days, q, today);
  const tools = new Map<string, number>();
  const byRuns = new Map<string, number>();
  entries.forEach((e, i) => {
    if (days[i] < w.from || days[i] > w.to) return;
    tools.set(e.tool, (tools.get(e.tool) ?? 0) + 1);
    if (e.run_id) byRuns.set(e.tool, (byRuns.get(e.tool) ?? 0) + 1);
  });
  const rows = [...tools].map(([tool, count]) => ({ tool, count, by_agent_runs: byRuns.get(tool) ?? 0 }))
    .sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool))
    .slice(0, q.limit ?? 5);
  let summary: { value: number; previous?: number; change_bps?: number } = { value: r.value };
  if (r.previous !== undefined) {
    const change = changeBps(r.value, r.previous);
    summary = change === undefined ? { value: r.value, previous: r.previous } : { value: r.value, previous: r.previous, change_bps: change };
  }
  return { metric: q.metric, unit: 'count' as const, series: r.series, summary: withTarget(q, summary), rows };
};
