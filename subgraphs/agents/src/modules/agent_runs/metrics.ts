import { buckets, calendarDays, changeBps, localDate, previousWindow, readByKeys, type MetricQuery, type MetricReader } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { metricSpan, withTarget } from '../../lib/window.ts';
import { endMark, usageRollupId, usageRollups, type UsageRollupDoc } from '../../lib/usage.ts';
import { agentRuns, FINAL_STATUSES, runQueue, RUN_STATUSES } from './model.ts';

/** The day rollups of every day of both windows, by `_id` (never the runs). */
async function daysOf(db: Connection, workspace: string, q: MetricQuery, now: Date) {
  const span = metricSpan(q, now);
  const previous = q.compare ? previousWindow(span.window, q.compare) : null;
  const days = [...new Set([...calendarDays(span.window.from, span.window.to), ...(previous ? calendarDays(previous.from, previous.to) : [])])];
  const docs = await readByKeys<UsageRollupDoc>(db, usageRollups(db).collection.collectionName, '_id', days.map((d) => usageRollupId(workspace, d)));
  const byDay = new Map(docs.map((d) => [d.day, d]));
  return { span, previous, byDay };
}

/** A series of one counter over the window's buckets, with the comparison window's beside it. */
function seriesOf(q: MetricQuery, window: { from: string; to: string }, previous: { from: string; to: string } | null, value: (from: string, to: string) => number) {
  const series: { period: string; period_end: string; value: number; previous?: number }[] = buckets(window, q.interval).map((b) => ({ ...b, value: value(b.period, b.period_end) }));
  if (previous) buckets(previous, q.interval).forEach((b, i) => {
    if (series[i]) series[i].previous = value(b.period, b.period_end);
  });
  return series;
}

function summaryOf(q: MetricQuery, value: number, previous: number | undefined) {
  if (previous === undefined) return withTarget(q, { value });
  const change = changeBps(value, previous);
  return withTarget(q, change === undefined ? { value, previous } : { value, previous, change_bps: change });
}

/** Σ of `read(doc)` over the days from..to. */
function sumDays(byDay: Map<string, UsageRollupDoc>, from: string, to: string, read: (d: UsageRollupDoc) => number): number {
  let total = 0;
  for (const day of calendarDays(from, to)) {
    const d = byDay.get(day);
    if (d) total += read(d);
  }
  return total;
}

/** The p-th percentile (nearest rank) of sorted values; 0 when there are none. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * metrics.query `agent_runs` (unit count), from the usage rollups kept on write: runs ended per
 * bucket of the window (by the day they were started); summary = runs ended in the window; rows =
 * one per status with its runs and cost, the first (`status: "all"`) with the p50 and p95 duration
 * (nearest rank over each ended run's duration, start to end) and the total cost in millionths of a
 * minor unit. Runs not yet ended are counted from the run queue (a handful of documents) in the
 * rows of their current status.
 */
export const agentRunsMetric: MetricReader = async (q, { db, workspace, now }) => {
  const { span, previous, byDay } = await daysOf(db, workspace, q, now);
  const w = span.window;
  const runs = (from: string, to: string) => sumDays(byDay, from, to, (d) => d.v.runs ?? 0);
  // Runs not yet in the rollups (not ended, or ended a moment ago and not booked yet) are read from
  // the run queue: one small document per such run.
  const queued = await runQueue(db).find({ workspace }, { _id: 1 }).limit(500).lean();
  const pending = queued.length
    ? await agentRuns(db).find({ _id: { $in: queued.map((a) => a._id) }, workspace }, { status: 1, day: 1, usage: 1, created_at: 1, finished_at: 1, ended_applied: 1 }).lean()
    : [];
  // A run whose end is being booked right now is in the rollup already when its mark is there.
  const booked = (r: { _id: string; day: string; ended_applied: boolean }) => r.ended_applied || (byDay.get(r.day)?.applied ?? []).includes(endMark(r._id));
  const open = pending.filter((r) => !booked(r));
  const inWindow = open.filter((r) => r.day >= w.from && r.day <= w.to);
  const unbooked = inWindow.filter((r) => FINAL_STATUSES.includes(r.status));
  const unbookedRuns = (from: string, to: string) => open.filter((r) => FINAL_STATUSES.includes(r.status) && r.day >= from && r.day <= to).length;
  const runsAll = (from: string, to: string) => runs(from, to) + unbookedRuns(from, to);
  const durations = [
    ...calendarDays(w.from, w.to).flatMap((day) => byDay.get(day)?.durations ?? []),
    ...unbooked.map((r) => new Date(r.finished_at ?? now).getTime() - new Date(r.created_at).getTime()),
  ].sort((a, b) => a - b);
  const unbookedCost = (status?: string) => unbooked.filter((r) => !status || r.status === status).reduce((s, r) => s + r.usage.cost_micros, 0);
  const rows = [
    {
      status: 'all', runs: runsAll(w.from, w.to), p50_ms: percentile(durations, 50), p95_ms: percentile(durations, 95),
      cost_micros: sumDays(byDay, w.from, w.to, (d) => d.v.run_cost_micros ?? 0) + unbookedCost(),
    },
    ...RUN_STATUSES.map((status) => ({
      status,
      runs: sumDays(byDay, w.from, w.to, (d) => d.v[`runs_${status}`] ?? 0) + inWindow.filter((r) => r.status === status).length,
      cost_micros: sumDays(byDay, w.from, w.to, (d) => d.v[`cost_${status}`] ?? 0) + unbookedCost(status),
    })),
  ];
  return {
    metric: q.metric, unit: 'count' as const, series: seriesOf(q, w, previous, runsAll),
    summary: summaryOf(q, runsAll(w.from, w.to), previous ? runsAll(previous.from, previous.to) : undefined), rows,
  };
};

/**
 * metrics.query `llm_usage` (unit count: tokens, input + output), from the usage rollups kept on
 * write: tokens per bucket; summary = the window's tokens; rows = one per model and agent with
 * input, output and cached tokens, model calls, and cost (`cost_micros`, millionths of a minor unit
 * of `currency`), most tokens first (`limit`, default 20).
 */
export const llmUsageMetric: MetricReader = async (q, { db, workspace, now }) => {
  const { span, previous, byDay } = await daysOf(db, workspace, q, now);
  const w = span.window;
  const tokens = (from: string, to: string) => sumDays(byDay, from, to, (d) => (d.v.input_tokens ?? 0) + (d.v.output_tokens ?? 0));
  const perKey = new Map<string, Record<string, number>>();
  const names = new Map<string, string>();
  const currency = new Map<string, string>();
  for (const day of calendarDays(w.from, w.to)) {
    const d = byDay.get(day);
    if (!d) continue;
    for (const [k, v] of Object.entries(d.names ?? {})) names.set(k, v);
    for (const [k, v] of Object.entries(d.currency ?? {})) currency.set(k, v);
    for (const [key, counters] of Object.entries(d.k ?? {})) {
      const sum = perKey.get(key) ?? {};
      for (const [c, n] of Object.entries(counters)) sum[c] = (sum[c] ?? 0) + n;
      perKey.set(key, sum);
    }
  }
  const rows = [...perKey].map(([key, c]) => {
    const [model, agent] = key.split('~');
    return {
      model_id: model, model_name: names.get(model) ?? model, agent_id: agent, agent_name: names.get(agent) ?? agent,
      input_tokens: c.input_tokens ?? 0, output_tokens: c.output_tokens ?? 0, cached_tokens: c.cached_tokens ?? 0, calls: c.calls ?? 0,
      cost_micros: c.cost_micros ?? 0, currency: currency.get(model) ?? 'USD',
    };
  }).sort((a, b) => b.input_tokens + b.output_tokens - (a.input_tokens + a.output_tokens) || a.model_id.localeCompare(b.model_id) || a.agent_id.localeCompare(b.agent_id))
    .slice(0, q.limit ?? 20);
  return {
    metric: q.metric, unit: 'count' as const, series: seriesOf(q, w, previous, tokens),
    summary: summaryOf(q, tokens(w.from, w.to), previous ? tokens(previous.from, previous.to) : undefined), rows,
  };
};

/** Today in the workspace (for tests that compare with the rollups' day). */
export function today(now = new Date()): string {
  return localDate(now);
}
