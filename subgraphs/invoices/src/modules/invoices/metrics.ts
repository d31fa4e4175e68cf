import { CuadraError, windowProblem, type MetricQuery, type MetricReader, type ReadContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { INVOICE_STATUSES } from './model.ts';
import { agingAt, cumulative, rangeSums, summaryOf, withTarget, type MetricAnswer } from '../../books/rollup-reads.ts';
import { partySums, topParties } from '../../books/party-leaders.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { addDays, localDate } from '../../lib/money.ts';
import { buckets, positionDate, previousWindow, queryWindow } from '../../books/calendar.ts';

/** The receivables metrics the invoices module answers for the composite `metrics.query` (DOMAIN.md). */
export const RECEIVABLES_METRICS = ['revenue', 'ar_outstanding', 'ar_aging', 'invoices_status', 'top_customers'] as const;

export type { MetricAnswer };
function statusCount(v: Record<string, number>): number {
  return INVOICE_STATUSES.reduce((s, st) => s + (v[`status_${st}`] ?? 0), 0);
}

/** A window metric: per bucket and for the whole window, with `previous` filled when the query compares. */
async function windowSeries(
  db: Connection, workspace: string, currency: string, q: MetricQuery, today: string,
  key: string | ((v: Record<string, number>) => number),
): Promise<{ series: MetricAnswer['series']; value: number; previous?: number }> {
  const w = queryWindow(q, today);
  const bs = buckets(w, q.interval ?? 'day');
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const pbs = pw ? buckets(pw, q.interval ?? 'day') : [];
  const sums = await rangeSums(db, workspace, currency, [w, ...bs.map((b) => ({ from: b.period, to: b.period_end })), ...(pw ? [pw] : []), ...pbs.map((b) => ({ from: b.period, to: b.period_end }))]);
  const value = sums[0](key);
  const series: MetricAnswer['series'] = bs.map((b, i) => ({ ...b, value: sums[1 + i](key) }));
  if (!pw) return { series, value };
  const pStart = 1 + bs.length;
  series.forEach((point, i) => {
    if (pbs[i]) point.previous = sums[pStart + 1 + i](key);
  });
  return { series, value, previous: sums[pStart](key) };
}

/**
 * Answers one receivables metric for a workspace from the rollups (never scanning invoices,
 * except ar_aging, which reads the invoices open at `as_of` by an indexed query). It writes nothing:
 * a rollup intent or payment a dead process left is finished by the sweep (maintenance.ts).
 */
async function receivablesMetric(q: MetricQuery, ctx: ReadContext): Promise<MetricAnswer> {
  const { db, workspace, now } = ctx;
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const currency = await workspaceCurrency(db, workspace, ctx);
  const today = localDate(now);
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 5), 1), 100);

  switch (q.metric) {
    case 'revenue': {
      const r = await windowSeries(db, workspace, currency, q, today, 'revenue');
      return { metric: q.metric, unit: 'money', currency, series: r.series, summary: summaryOf(r.value, r.previous, q) };
    }
    case 'invoices_status': {
      const w = queryWindow(q, today);
      // Both reads in one turn: their rollups come in one command.
      const [r, [window]] = await Promise.all([windowSeries(db, workspace, currency, q, today, statusCount), rangeSums(db, workspace, currency, [w])]);
      const rows = INVOICE_STATUSES.map((status) => ({ status, count: window(`status_${status}`) }));
      return { metric: q.metric, unit: 'count', series: r.series, summary: summaryOf(r.value, r.previous, q), rows };
    }
    case 'ar_outstanding': {
      // Outstanding at a day = what was outstanding before the window + the change since.
      const w = queryWindow(q, today);
      const bs = buckets(w, q.interval ?? 'day');
      const pw = q.compare ? previousWindow(w, q.compare) : null;
      const pbs = pw ? buckets(pw, q.interval ?? 'day') : [];
      // Every read of both windows in one turn: their rollups come in one command.
      const [base, sums, pbase, psums] = await Promise.all([
        cumulative(db, workspace, currency, 'ar', addDays(w.from, -1), today),
        rangeSums(db, workspace, currency, bs.map((b) => ({ from: b.period, to: b.period_end }))),
        pw ? cumulative(db, workspace, currency, 'ar', addDays(pw.from, -1), today) : 0,
        pw ? rangeSums(db, workspace, currency, pbs.map((b) => ({ from: b.period, to: b.period_end }))) : [],
      ]);
      let running = base;
      const series: MetricAnswer['series'] = bs.map((b, i) => ({ ...b, value: (running += sums[i]('ar')) }));
      const value = running;
      let previous: number | undefined;
      if (pw) {
        let prunning = pbase;
        const pvalues = pbs.map((_, i) => (prunning += psums[i]('ar')));
        series.forEach((p, i) => {
          if (pvalues[i] !== undefined) p.previous = pvalues[i];
        });
        previous = prunning;
      }
      return { metric: q.metric, unit: 'money', currency, series, summary: summaryOf(value, previous, q) };
    }
    case 'ar_aging': {
      // From the due-date rollups: what was open at as_of on invoices due on each day/month is the
      // sum of their changes dated on or before as_of. > 90 days is the rest of the total.
      const asOf = positionDate(q, today);
      const { total, rows } = await agingAt(db, workspace, currency, 'ar', asOf, today);
      return {
        metric: q.metric, unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: total }],
        summary: withTarget({ value: total }, q), rows,
      };
    }
    case 'top_customers': {
      const w = queryWindow(q, today);
      const pw = q.compare ? previousWindow(w, q.compare) : null;
      // Exact, from the leaders of the window's days and months (books/party-leaders.ts).
      const top = await topParties(db, workspace, currency, w.from, w.to, 'revenue', limit);
      const previousTotals = pw ? await partySums(db, workspace, currency, pw.from, pw.to, 'revenue', top.rows.map((r) => r.id)) : null;
      const rows = top.rows.map((r) => ({ customer_id: r.id, name: r.name, value: r.value, ...(previousTotals ? { previous: previousTotals.get(r.id) ?? 0 } : {}) }));
      const value = rows.reduce((s, r) => s + r.value, 0);
      const previous = previousTotals ? rows.reduce((s, r) => s + ((r as { previous?: number }).previous ?? 0), 0) : undefined;
      return { metric: q.metric, unit: 'money', currency, series: [{ period: w.from, period_end: w.to, value }], summary: summaryOf(value, previous, q), rows };
    }
  }
  throw new CuadraError('invalid_input', `Unknown metric ${q.metric}.`, { field: '/metric' });
}

/** The readers of the receivables metrics, one per name (the module manifest declares them). */
export const receivablesMetrics: Record<string, MetricReader> = Object.fromEntries(
  RECEIVABLES_METRICS.map((metric) => [metric, receivablesMetric]),
);
