import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { invoices } from '../models/invoice.ts';
import { payments } from '../models/payment.ts';
import { rollups, type RollupDoc } from '../models/rollup.ts';
import { settings } from '../models/settings.ts';
import { addDays, localDate } from '../money.ts';
import { completeStuckPayments } from '../payment-ops.ts';
import { repairPendingRollups } from '../rollups.ts';
import { agingBuckets } from './aging.ts';
import { buckets, changeBps, positionDate, previousWindow, queryWindow, splitByMonths, type Bucket, type MetricQuery } from './periods.ts';

/** The metrics this subgraph answers for the composite `metrics.query` (DOMAIN.md). */
export const RECEIVABLES_METRICS = ['revenue', 'ar_outstanding', 'ar_aging', 'invoices_status', 'top_customers'] as const;

/** The contract shape of a metric answer (CONTRACT.md §8). */
export interface MetricAnswer {
  metric: string;
  unit: 'money' | 'ratio' | 'count';
  currency?: string;
  series: { period: string; period_end: string; value: number; previous?: number }[];
  summary: { value: number; previous?: number; change_bps?: number; target?: number };
  rows?: Record<string, unknown>[];
}

/** Sums of rollup counters per day of a range, for the workspace total. */
type DailyTotals = Map<string, Record<string, number>>;

async function dailyTotals(db: Connection, workspace: string, currency: string, from: string, to: string): Promise<DailyTotals> {
  const docs = await rollups(db).find({ workspace, currency, grain: 'd', customer: '*', period: { $gte: from, $lte: to } }, { period: 1, v: 1 }).lean<RollupDoc[]>();
  return new Map(docs.map((d) => [d.period, d.v]));
}

function sumRange(daily: DailyTotals, from: string, to: string, key: string | ((v: Record<string, number>) => number)): number {
  let sum = 0;
  for (const [day, v] of daily) {
    if (day < from || day > to) continue;
    sum += typeof key === 'string' ? (v[key] ?? 0) : key(v);
  }
  return sum;
}

/** Σ of a counter over all days up to and including `date`: monthly rollups for whole months, daily for the rest. */
async function cumulative(db: Connection, workspace: string, currency: string, key: string, date: string): Promise<number> {
  const month = date.slice(0, 7);
  const months = await rollups(db).find({ workspace, currency, grain: 'm', customer: '*', period: { $lt: month } }, { v: 1 }).lean<RollupDoc[]>();
  const days = await rollups(db).find({ workspace, currency, grain: 'd', customer: '*', period: { $gte: `${month}-01`, $lte: date } }, { v: 1 }).lean<RollupDoc[]>();
  return [...months, ...days].reduce((s, d) => s + (d.v[key] ?? 0), 0);
}

/** Per-customer sums of `key` over a range, reading monthly rollups for whole months. */
async function customerTotals(db: Connection, workspace: string, currency: string, from: string, to: string, key: string): Promise<Map<string, { name: string; value: number }>> {
  const split = splitByMonths(from, to);
  const filters: Record<string, unknown>[] = split.days.map((r) => ({ grain: 'd', period: { $gte: r.from, $lte: r.to } }));
  if (split.months) filters.push({ grain: 'm', period: { $gte: split.months.from, $lte: split.months.to } });
  const out = new Map<string, { name: string; value: number }>();
  for (const f of filters) {
    const docs = await rollups(db).find({ workspace, currency, customer: { $ne: '*' }, ...f }, { customer: 1, name: 1, v: 1 }).lean<RollupDoc[]>();
    for (const d of docs) {
      const acc = out.get(d.customer) ?? { name: d.name ?? d.customer, value: 0 };
      acc.value += d.v[key] ?? 0;
      if (d.name) acc.name = d.name;
      out.set(d.customer, acc);
    }
  }
  return out;
}

const STATUSES = ['draft', 'posted', 'partially_paid', 'paid', 'cancelled'] as const;

function statusCount(v: Record<string, number>): number {
  return STATUSES.reduce((s, st) => s + (v[`status_${st}`] ?? 0), 0);
}

function withTarget(summary: MetricAnswer['summary'], q: MetricQuery): MetricAnswer['summary'] {
  return q.target === undefined ? summary : { ...summary, target: q.target };
}

/** A window metric read from daily totals, with `previous` filled when the query compares. */
async function windowSeries(
  db: Connection, workspace: string, currency: string, q: MetricQuery, today: string,
  valueOf: (daily: DailyTotals, b: Bucket) => number,
): Promise<{ series: MetricAnswer['series']; value: number; previous?: number }> {
  const w = queryWindow(q, today);
  const bs = buckets(w, q.interval ?? 'day');
  const daily = await dailyTotals(db, workspace, currency, w.from, w.to);
  const series: MetricAnswer['series'] = bs.map((b) => ({ ...b, value: valueOf(daily, b) }));
  const value = valueOf(daily, { period: w.from, period_end: w.to });
  if (!q.compare) return { series, value };
  const pw = previousWindow(w, q.compare);
  const pdaily = await dailyTotals(db, workspace, currency, pw.from, pw.to);
  const pbs = buckets(pw, q.interval ?? 'day');
  series.forEach((point, i) => {
    if (pbs[i]) point.previous = valueOf(pdaily, pbs[i]);
  });
  return { series, value, previous: valueOf(pdaily, { period: pw.from, period_end: pw.to }) };
}

function summaryOf(value: number, previous: number | undefined, q: MetricQuery): MetricAnswer['summary'] {
  if (previous === undefined) return withTarget({ value }, q);
  const change = changeBps(value, previous);
  return withTarget(change === undefined ? { value, previous } : { value, previous, change_bps: change }, q);
}

/**
 * Answers one receivables metric for a workspace from the rollups (never scanning invoices,
 * except ar_aging, which reads the invoices open at `as_of` by an indexed query). Finishes any
 * rollup intent or payment a dead process left behind first, so the numbers are whole.
 */
export async function receivablesMetric(db: Connection, workspace: string, q: MetricQuery, now = new Date()): Promise<MetricAnswer> {
  if (!(RECEIVABLES_METRICS as readonly string[]).includes(q.metric)) {
    throw new CuadraError('invalid_input', `The invoices subgraph does not answer the metric "${q.metric}".`, { field: '/metric' });
  }
  if ((q.from && !q.to) || (!q.from && q.to)) throw new CuadraError('invalid_input', '`from` and `to` go together.', { field: q.from ? '/to' : '/from' });
  if (q.from && q.to && q.from > q.to) throw new CuadraError('invalid_input', '`from` is after `to`.', { field: '/from' });
  if (q.from && q.to && (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 > 365) throw new CuadraError('invalid_input', 'A window is at most 366 days.', { field: '/to' });
  await completeStuckPayments({ db, workspace, now });
  await repairPendingRollups(db, workspace, [invoices(db), payments(db)], now);
  const currency = (await settings(db).findById(workspace, { currency: 1 }).lean())?.currency ?? 'COP';
  const today = localDate(now);
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 5), 1), 100);

  switch (q.metric) {
    case 'revenue': {
      const r = await windowSeries(db, workspace, currency, q, today, (d, b) => sumRange(d, b.period, b.period_end, 'revenue'));
      return { metric: q.metric, unit: 'money', currency, series: r.series, summary: summaryOf(r.value, r.previous, q) };
    }
    case 'invoices_status': {
      const w = queryWindow(q, today);
      const r = await windowSeries(db, workspace, currency, q, today, (d, b) => sumRange(d, b.period, b.period_end, statusCount));
      const daily = await dailyTotals(db, workspace, currency, w.from, w.to);
      const rows = STATUSES.map((status) => ({ status, count: sumRange(daily, w.from, w.to, `status_${status}`) }));
      return { metric: q.metric, unit: 'count', series: r.series, summary: summaryOf(r.value, r.previous, q), rows };
    }
    case 'ar_outstanding': {
      const w = queryWindow(q, today);
      const bs = buckets(w, q.interval ?? 'day');
      const base = await cumulative(db, workspace, currency, 'ar', addDays(w.from, -1));
      const daily = await dailyTotals(db, workspace, currency, w.from, w.to);
      const at = (end: string) => base + sumRange(daily, w.from, end, 'ar');
      const series: MetricAnswer['series'] = bs.map((b) => ({ ...b, value: at(b.period_end) }));
      const value = at(w.to);
      let previous: number | undefined;
      if (q.compare) {
        const pw = previousWindow(w, q.compare);
        const pbs = buckets(pw, q.interval ?? 'day');
        const pbase = await cumulative(db, workspace, currency, 'ar', addDays(pw.from, -1));
        const pdaily = await dailyTotals(db, workspace, currency, pw.from, pw.to);
        const pat = (end: string) => pbase + sumRange(pdaily, pw.from, end, 'ar');
        series.forEach((p, i) => {
          if (pbs[i]) p.previous = pat(pbs[i].period_end);
        });
        previous = pat(pw.to);
      }
      return { metric: q.metric, unit: 'money', currency, series, summary: summaryOf(value, previous, q) };
    }
    case 'ar_aging': {
      const asOf = positionDate(q, today);
      const open = await invoices(db).find(
        { workspace, kind: 'invoice', currency, issue_date: { $lte: asOf }, status: { $ne: 'draft' }, $or: [{ closed_on: null }, { closed_on: { $gt: asOf } }] },
        { amount_due: 1, issue_date: 1, due_date: 1, settlements: 1 },
      ).lean();
      const aging = agingBuckets(open, asOf);
      return {
        metric: q.metric, unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: aging.total }],
        summary: withTarget({ value: aging.total }, q), rows: aging.rows,
      };
    }
    case 'top_customers': {
      const w = queryWindow(q, today);
      const totals = await customerTotals(db, workspace, currency, w.from, w.to, 'revenue');
      const ranked = [...totals.entries()].map(([customer_id, t]) => ({ customer_id, name: t.name, value: t.value }))
        .filter((r) => r.value !== 0).sort((a, b) => b.value - a.value || a.customer_id.localeCompare(b.customer_id)).slice(0, limit);
      let previousTotals: Map<string, { name: string; value: number }> | null = null;
      if (q.compare) previousTotals = await customerTotals(db, workspace, currency, previousWindow(w, q.compare).from, previousWindow(w, q.compare).to, 'revenue');
      const rows = ranked.map((r) => (previousTotals ? { ...r, previous: previousTotals.get(r.customer_id)?.value ?? 0 } : r));
      const value = rows.reduce((s, r) => s + r.value, 0);
      const previous = previousTotals ? rows.reduce((s, r) => s + ((r as { previous?: number }).previous ?? 0), 0) : undefined;
      return { metric: q.metric, unit: 'money', currency, series: [{ period: w.from, period_end: w.to, value }], summary: summaryOf(value, previous, q), rows };
    }
  }
  throw new CuadraError('invalid_input', `Unknown metric ${q.metric}.`, { field: '/metric' });
}
