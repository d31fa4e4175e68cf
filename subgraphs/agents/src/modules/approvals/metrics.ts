import { countSeries, localDate, type MetricReader } from '@cuadra/shared';
import { metricSpan, withTarget } from '../../lib/window.ts';

/**
 * metrics.query `approvals_pending` (unit count), from the shared governance store: summary =
 * approvals waiting for a decision now; series = approvals requested per bucket of the window
 * (`previous` from the comparison window).
 */
export const approvalsPendingMetric: MetricReader = async (q, { governance, workspace, now }) => {
  const { today, from, to } = metricSpan(q, now);
  const [pending, requested] = await Promise.all([governance.approvals.countPending(workspace, now), governance.approvals.requestedBetween(workspace, from, to)]);
  const { series } = countSeries(requested.map((at) => localDate(new Date(at))), q, today);
  return { metric: q.metric, unit: 'count' as const, series, summary: withTarget(q, { value: pending }) };
};
